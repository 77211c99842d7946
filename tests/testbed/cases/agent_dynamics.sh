# SPDX-License-Identifier: Apache-2.0
# pathwise serve follows the topology: ANA changes, a controller that goes
# away (its series removed within two intervals) and comes back.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1
url=http://127.0.0.1:9877
"$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s >"$TB_OUT/serve.log" 2>&1 &
pw_pid=$!
trap 'kill $pw_pid 2>/dev/null' EXIT
tb_wait 20 curl -sf -o /dev/null "$url/healthz" || fail "no /healthz 200 within 20 s"
pass "/healthz 200"
f=/tmp/m.prom
scrape "$url/metrics" "$f" || fail "scrape"
p1=${TB_PATHS[1]}
expect_eq "ana[1] before" "$(prom_values "$f" pathwise_path_ana_state path="$p1" state=optimized)" 1

tb_path_ana 1 inaccessible || fail "tb_path_ana"
sleep 2.5 # two intervals and a half
scrape "$url/metrics" "$f" || fail "scrape"
cp "$f" "$TB_OUT/after-ana.prom"
expect_eq "ana[1] inaccessible" "$(prom_values "$f" pathwise_path_ana_state path="$p1" state=inaccessible)" 1
# The default metrics profile exports a path's current ANA state only.
expect_eq "ana[1] optimized series" "$(prom_count "$f" pathwise_path_ana_state path="$p1" state=optimized)" 0
tb_path_ana 1 optimized || fail "tb_path_ana back"

c0=${TB_CTRLS[0]} p0=${TB_PATHS[0]}
changes0=$(prom_values "$f" pathwise_topology_changes_total)
tb_ctrl_disconnect 0 || fail "disconnect"
sleep 2.5
scrape "$url/metrics" "$f" || fail "scrape after disconnect: agent not serving"
cp "$f" "$TB_OUT/after-disconnect.prom"
expect_eq "series of $c0 after disconnect" "$(grep -cE "controller=\"$c0\"" "$f")" 0
expect_eq "series of $p0 after disconnect" "$(grep -cE "path=\"$p0\"" "$f")" 0
expect_eq "path_info after disconnect" "$(prom_count "$f" pathwise_path_info)" 1
changes1=$(prom_values "$f" pathwise_topology_changes_total)
((changes1 > changes0)) || fail "pathwise_topology_changes_total did not grow ($changes0 -> $changes1)"
pass "topology changes $changes0 -> $changes1"
curl -sf -o /dev/null "$url/healthz" || fail "healthz after disconnect"

tb_ctrl_reconnect 0 || fail "reconnect"
sleep 2.5
scrape "$url/metrics" "$f" || fail "scrape after reconnect"
cp "$f" "$TB_OUT/after-reconnect.prom"
expect_eq "path_info after reconnect" "$(prom_count "$f" pathwise_path_info)" 2
c0=${TB_CTRLS[0]} p0=${TB_PATHS[0]}
expect_eq "ctrl live after reconnect" "$(prom_values "$f" pathwise_controller_state controller="$c0" state=live)" 1
expect_eq "path back" "$(prom_count "$f" pathwise_path_info path="$p0" controller="$c0")" 1
kill "$pw_pid"
wait "$pw_pid"
rc=$?
((rc == 0 || rc == 143)) || fail "pathwise serve exited $rc on SIGTERM"
pass "serve stopped cleanly ($rc)"
