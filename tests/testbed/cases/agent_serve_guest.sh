# Guest half of agent_serve_test.sh: runs pathwise serve on :9877 until the
# host creates $TB_SHARE/done (testbed --share).
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
[[ -n $TB_SHARE ]] || fail "needs testbed --share"
"$1" serve --interval=1s >"$TB_OUT/serve.log" 2>&1 &
pid=$!
tb_wait 300 test -e "$TB_SHARE/done" || fail "the host never signalled done"
kill -0 "$pid" || fail "pathwise serve died"
kill "$pid"
wait "$pid"
