# SPDX-License-Identifier: Apache-2.0
# The script's exit status is testbed run's exit status.
echo "exiting with 3"
exit 3
