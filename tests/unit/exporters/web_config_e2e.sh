#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --web.config.file end to end against the pathwise binary: a throwaway CA
# and certificates (openssl), bcrypt hashes (htpasswd), curl over TLS with
# and without credentials and client certificates (every client_auth_type),
# expired certificates on either side, TLS and plain HTTP on the wrong
# port, gzip, IPv6, Debian's prometheus scraping over https with basic
# auth, and the one-line exit 2 for bad files. Serves the host's /sys with
# --bpf=off, so it needs no root.
#   web_config_e2e.sh PATHWISE
set -uo pipefail
PW=$(realpath "$1")
failures=0
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

for tool in curl openssl htpasswd prometheus; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (scripts/setup-deps)" >&2; exit 1; }
done

# --- a CA, a server certificate for 127.0.0.1/localhost, a client one.
cd "$tmp" || exit 1
gen() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "$@" 2>/dev/null; }
gen -x509 -days 1 -subj /CN=pathwise-test-ca -keyout ca.key -out ca.crt
gen -subj /CN=localhost -keyout server.key -out server.csr
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
  -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') \
  -out server.crt 2>/dev/null
gen -subj /CN=scraper -keyout client.key -out client.csr
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
  -extfile <(printf 'extendedKeyUsage=clientAuth\n') -out client.crt 2>/dev/null
[[ -s server.crt && -s client.crt ]] || { echo "FAIL: openssl could not make certificates" >&2; exit 1; }
hash=$(htpasswd -nbBC 10 prom 's3cret' | cut -d: -f2-)

# Relative paths: resolved against the config file's directory.
cat >web.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: $tmp/server.key
basic_auth_users:
  prom: '$hash'
EOF
cat >optional.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: VerifyClientCertIfGiven
  client_ca_file: ca.crt
EOF
cat >mtls.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
EOF

cat >anycert.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAnyClientCert
EOF
cat >request.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequestClientCert
http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
EOF
# An expired server certificate and an expired client certificate, from
# the same CA (openssl ca can date them in the past).
mkdir -p cadb && : >cadb/index.txt && echo 01 >cadb/serial
cat >ca.cnf <<'EOF'
[ ca ]
default_ca = x
[ x ]
database = cadb/index.txt
new_certs_dir = cadb
serial = cadb/serial
default_md = sha256
policy = p
[ p ]
commonName = supplied
EOF
past() {  # past CSR OUT: a certificate valid for one day in 2020
  openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in "$1" -out "$2" \
    -startdate 20200101000000Z -enddate 20200102000000Z -notext >/dev/null 2>&1
}
past server.csr expired-server.crt
past client.csr expired-client.crt
[[ -s expired-server.crt && -s expired-client.crt ]] || { echo "FAIL: openssl ca could not make expired certificates" >&2; exit 1; }
cat >expired.yml <<EOF
tls_server_config:
  cert_file: expired-server.crt
  key_file: server.key
EOF

# start CONFIG [HOST]: serves CONFIG (none: plain HTTP) on a free port of
# HOST (127.0.0.1; [::1] for IPv6); sets $port (empty if it never came up).

start() {
  port=""
  local p pid host=${2:-127.0.0.1} config=()
  [[ $1 != none ]] && config=(--web.config.file="$1")
  for _ in $(seq 1 10); do
    p=$((20000 + RANDOM % 40000))
    "$PW" serve --web.listen-address="$host:$p" "${config[@]}" \
      --bpf=off --path.sysfs=/sys --log.level=warn 2>"$tmp/serve.err" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      # Any answer (even a 401) means it is up; -k: the expired certificate.
      if curl -s -o /dev/null -k --cert client.crt --key client.key \
        "https://$host:$p/healthz" || { [[ $1 == none ]] &&
        curl -s -o /dev/null "http://$host:$p/healthz"; }; then port=$p; return; fi
      sleep 0.1
    done
    kill "$pid" 2>/dev/null
  done
  echo "serve never came up: $(cat "$tmp/serve.err")" >&2
}
# code ARGS...: the HTTP status curl got, 000 if no HTTP response.
code() { curl -s -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' --max-time 5 "$@"; }

start web.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/web.yml never came up"
else
  url="https://127.0.0.1:$port/metrics"
  c=$(code --cacert ca.crt "$url")
  if [[ $c == 401 ]] && grep -qi '^WWW-Authenticate: Basic realm="pathwise"' "$tmp/headers"; then
    ok "https, no credentials -> 401 with WWW-Authenticate"
  else
    fail "https, no credentials -> $c: $(cat "$tmp/headers")"
  fi
  c=$(code --cacert ca.crt -u prom:wrong "$url")
  [[ $c == 401 ]] && ok "wrong password -> 401" || fail "wrong password -> $c"
  c=$(code --cacert ca.crt -u nobody:s3cret "$url")
  [[ $c == 401 ]] && ok "unknown user -> 401" || fail "unknown user -> $c"
  c=$(code --cacert ca.crt -u prom:s3cret "$url")
  if [[ $c == 200 ]] && grep -q '^pathwise_build_info{' "$tmp/body"; then
    ok "right credentials -> 200 with metrics"
  else
    fail "right credentials -> $c"
  fi
  c=$(code --cacert ca.crt -u prom:s3cret "https://127.0.0.1:$port/healthz")
  [[ $c == 200 || $c == 503 ]] && ok "/healthz with credentials -> $c" || fail "/healthz -> $c"
  # The server's certificate is checked by the client: without the CA, no.
  rc=0; curl -s -o /dev/null --max-time 5 -u prom:s3cret "$url" || rc=$?
  [[ $rc == 60 ]] && ok "unknown CA -> curl refuses (rc 60)" || fail "unknown CA -> curl rc $rc"
  # Plain HTTP to the TLS port: no HTTP response, and no hang.
  t0=$SECONDS; rc=0
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -u prom:s3cret "http://127.0.0.1:$port/metrics") || rc=$?
  if [[ $rc != 0 && $c == 000 && $((SECONDS - t0)) -lt 5 ]]; then
    ok "plain HTTP to the TLS port fails cleanly (curl rc $rc, $((SECONDS - t0)) s)"
  else
    fail "plain HTTP to the TLS port: curl rc $rc, status $c, $((SECONDS - t0)) s"
  fi
  c=$(code --cacert ca.crt -u prom:s3cret "$url")
  [[ $c == 200 ]] && ok "still serving after the plain HTTP attempt" || fail "after plain HTTP -> $c"
  # min_version defaults to TLS12: a TLS 1.1 client (allowed to try by
  # SECLEVEL=0) gets no session; a default client gets 1.3.
  v11=$(openssl s_client -connect "127.0.0.1:$port" -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' </dev/null 2>&1)
  v13=$(openssl s_client -connect "127.0.0.1:$port" -CAfile ca.crt </dev/null 2>&1)
  if grep -q 'Cipher is (NONE)' <<<"$v11" && grep -q '^New, TLSv1.3' <<<"$v13"; then
    ok "TLS 1.1 refused, TLS 1.3 negotiated"
  else
    fail "TLS versions: 1.1: $(grep -m1 -E 'New,|alert' <<<"$v11"); default: $(grep -m1 'New,' <<<"$v13")"
  fi

  # Debian's prometheus scraping over https with basic auth. A 3 s
  # timeout: a sanitizer build on a loaded machine takes a good part of a
  # second for the TLS handshake and the bcrypt check together.
  cat >prometheus.yml <<EOF
global: {scrape_interval: 3s, scrape_timeout: 3s}
scrape_configs:
  - job_name: pathwise
    scheme: https
    tls_config: {ca_file: $tmp/ca.crt}
    basic_auth: {username: prom, password: s3cret}
    static_configs: [{targets: ["127.0.0.1:$port"]}]
  - job_name: pathwise_wrong_password
    scheme: https
    tls_config: {ca_file: $tmp/ca.crt}
    basic_auth: {username: prom, password: wrong}
    static_configs: [{targets: ["localhost:$port"]}]
EOF
  # A random port may be taken: another one until prometheus answers.
  pport=""
  for _ in $(seq 1 5); do
    p=$((20000 + RANDOM % 40000))
    rm -rf "$tmp/data"
    prometheus --config.file=prometheus.yml --storage.tsdb.path="$tmp/data" \
      --web.listen-address="127.0.0.1:$p" >"$tmp/prometheus.log" 2>&1 &
    ppid=$!
    pids+=("$ppid")
    for _ in $(seq 1 100); do
      kill -0 "$ppid" 2>/dev/null || break
      if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$p/-/ready"; then pport=$p; break; fi
      sleep 0.2
    done
    [[ -n $pport ]] && break
    kill "$ppid" 2>/dev/null
  done
  [[ -n $pport ]] || fail "prometheus never came up: $(tail -5 "$tmp/prometheus.log")"
  up=""
  for _ in $(seq 1 120); do
    [[ -n $pport ]] || break
    r=$(curl -s --max-time 2 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=up' 2>/dev/null)
    if grep -q '"job":"pathwise"[^}]*},"value":\[[0-9.]*,"1"\]' <<<"$r" &&
      grep -q '"job":"pathwise_wrong_password"' <<<"$r"; then up=$r; break; fi
    sleep 0.5
  done
  if [[ -n $up ]] && grep -q '"job":"pathwise_wrong_password"[^}]*},"value":\[[0-9.]*,"0"\]' <<<"$up"; then
    ok "prometheus scrapes over https with basic auth (up 1; wrong password: up 0)"
  else
    fail "prometheus: ${up:-no up series}: $(tail -5 "$tmp/prometheus.log")"
  fi
  t=$(curl -s "http://127.0.0.1:$pport/api/v1/targets")
  grep -q '401 Unauthorized' <<<"$t" && ok "prometheus reports the wrong password as 401" \
    || fail "prometheus targets: $t"
fi

# Client certificates: RequireAndVerifyClientCert.
start mtls.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/mtls.yml never came up"
else
  c=$(code --cacert ca.crt --cert client.crt --key client.key "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "mTLS: client certificate -> 200" || fail "mTLS with certificate -> $c"
  c=$(code --cacert ca.crt "https://127.0.0.1:$port/metrics")
  [[ $c == 000 ]] && ok "mTLS: no client certificate -> handshake refused" || fail "mTLS without certificate -> $c"
  # A certificate from another CA is refused too.
  gen -x509 -days 1 -subj /CN=stranger -keyout stranger.key -out stranger.crt
  c=$(code --cacert ca.crt --cert stranger.crt --key stranger.key "https://127.0.0.1:$port/metrics")
  [[ $c == 000 ]] && ok "mTLS: certificate of another CA -> refused" || fail "mTLS stranger -> $c"
fi

# VerifyClientCertIfGiven: no certificate is fine, a bad one is not.
start optional.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/optional.yml never came up"
else
  c=$(code --cacert ca.crt "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "optional client cert: none -> 200" || fail "optional, none -> $c"
  c=$(code --cacert ca.crt --cert client.crt --key client.key "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "optional client cert: valid -> 200" || fail "optional, valid -> $c"
  c=$(code --cacert ca.crt --cert stranger.crt --key stranger.key "https://127.0.0.1:$port/metrics")
  [[ $c == 000 ]] && ok "optional client cert: another CA's -> refused" || fail "optional, stranger -> $c"
fi

# RequireAnyClientCert: a certificate is required but not verified.
start anycert.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/anycert.yml never came up"
else
  c=$(code --cacert ca.crt --cert stranger.crt --key stranger.key "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "any client cert: another CA's -> 200" || fail "anycert, stranger -> $c"
  c=$(code --cacert ca.crt "https://127.0.0.1:$port/metrics")
  [[ $c == 000 ]] && ok "any client cert: none -> handshake refused" || fail "anycert, none -> $c"
fi

# RequestClientCert: asked for, never required or verified; and the
# configured security headers on every answer.
start request.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/request.yml never came up"
else
  c=$(code --cacert ca.crt "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "requested client cert: none -> 200" || fail "request, none -> $c"
  c=$(code --cacert ca.crt --cert stranger.crt --key stranger.key "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "requested client cert: another CA's -> 200" || fail "request, stranger -> $c"
  if grep -qi '^X-Frame-Options: deny' "$tmp/headers" &&
    grep -qi '^Strict-Transport-Security: max-age=31536000' "$tmp/headers"; then
    ok "http_server_config.headers on the answer"
  else
    fail "configured headers missing: $(cat "$tmp/headers")"
  fi
fi

# Expired certificates: the client refuses an expired server certificate;
# the server refuses an expired client certificate; neither sticks.
start expired.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/expired.yml never came up"
else
  rc=0; curl -s -o /dev/null --max-time 5 --cacert ca.crt "https://127.0.0.1:$port/healthz" || rc=$?
  [[ $rc == 60 ]] && ok "expired server certificate: curl refuses it (rc 60)" || fail "expired server cert: curl rc $rc"
  c=$(code -k "https://127.0.0.1:$port/healthz")
  [[ $c == 200 || $c == 503 ]] && ok "still serving after the refused handshake" || fail "after expired -> $c"
fi
start mtls.yml
if [[ -z $port ]]; then
  fail "serve with $tmp/mtls.yml never came up"
else
  t0=$SECONDS
  c=$(code --cacert ca.crt --cert expired-client.crt --key client.key "https://127.0.0.1:$port/metrics")
  [[ $c == 000 && $((SECONDS - t0)) -lt 5 ]] && ok "mTLS: expired client certificate -> refused at once" \
    || fail "mTLS expired client cert -> $c after $((SECONDS - t0)) s"
  c=$(code --cacert ca.crt --cert client.crt --key client.key "https://127.0.0.1:$port/metrics")
  [[ $c == 200 ]] && ok "mTLS: still serving after it" || fail "mTLS after expired -> $c"
fi

# A TLS client on the plain port: a clear client-side error at once, and
# the server goes on serving.
start none
if [[ -z $port ]]; then
  fail "plain serve never came up"
else
  t0=$SECONDS; rc=0
  curl -s -o /dev/null --max-time 5 -k "https://127.0.0.1:$port/healthz" || rc=$?
  [[ $rc == 35 && $((SECONDS - t0)) -lt 5 ]] && ok "TLS to the plain port fails cleanly (curl rc 35)" \
    || fail "TLS to the plain port: curl rc $rc after $((SECONDS - t0)) s"
  c=$(code "http://127.0.0.1:$port/healthz")
  [[ $c == 200 || $c == 503 ]] && ok "plain port still serving after it" || fail "plain after TLS -> $c"
  # gzip as Prometheus asks for it: curl decodes it and the text is whole.
  curl -s --compressed -D "$tmp/headers" -o "$tmp/body" --max-time 5 "http://127.0.0.1:$port/metrics"
  if grep -qi '^Content-Encoding: gzip' "$tmp/headers" && grep -q '^pathwise_build_info{' "$tmp/body"; then
    ok "gzip when asked, decoded by curl"
  else
    fail "gzip: $(cat "$tmp/headers")"
  fi
fi

# IPv6: TLS with basic auth on [::1].
start web.yml '[::1]'
if [[ -z $port ]]; then
  fail "serve on [::1] never came up: $(cat "$tmp/serve.err")"
else
  c=$(code -k -u prom:s3cret "https://[::1]:$port/metrics")
  [[ $c == 200 ]] && ok "IPv6 [::1]: TLS and basic auth -> 200" || fail "IPv6 -> $c"
fi

# Bad files: exit 2, one line on stderr naming the problem.

expect_bad() {
  local name=$1 pat=$2 file=$3 rc=0
  "$PW" serve --web.listen-address=127.0.0.1:0 --web.config.file="$file" --bpf=off \
    --path.sysfs=/sys >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  # A good file would serve forever: give it 10 s.
  for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill $pid 2>/dev/null
  wait $pid; rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  if [[ $rc == 2 && $lines == 1 ]] && grep -qE -e "$pat" "$tmp/err"; then
    ok "$name -> 2: $(cat "$tmp/err")"
  else
    fail "$name -> rc $rc, $lines lines: $(cat "$tmp/err")"
  fi
}
printf 'basic_auth_users: [\n' >badyaml.yml
printf 'basic_auth_user: {}\n' >unknown.yml
printf 'tls_server_config: {cert_file: missing.crt, key_file: server.key}\n' >nocert.yml
printf 'basic_auth_users: {prom: s3cret}\n' >plainpw.yml
printf 'tls_server_config: {cert_file: client.crt, key_file: server.key}\n' >mismatch.yml
expect_bad "missing file" "^pathwise: --web.config.file $tmp/nope.yml: No such file or directory$" "$tmp/nope.yml"
expect_bad "bad YAML" "^pathwise: --web.config.file .*badyaml.yml: bad YAML at line" badyaml.yml
expect_bad "unknown key" "basic_auth_user: unknown key$" unknown.yml
expect_bad "missing cert" "tls_server_config.cert_file .*/missing.crt: No such file or directory$" nocert.yml
expect_bad "plain password" "basic_auth_users.prom: not a bcrypt hash" plainpw.yml
expect_bad "key of another cert" "does not match cert_file" mismatch.yml

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all web config checks passed"
