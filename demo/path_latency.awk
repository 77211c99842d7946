# Per-path read view from two pathwise /metrics scrapes: IOPS, mean, p50 and
# p99 read latency over the interval between them. The quantiles come from
# the eBPF sampler's pathwise_path_io_latency_seconds histogram (interpolated
# like Prometheus' histogram_quantile); "-" when the agent runs on the sysfs
# fallback, which has no histogram. Each path also shows its read weight
# (0-64) and health from pathwise's scoring, and the line ends with the
# iopolicy pathwise recommends.
# Usage: awk -v t0=EPOCH -v t1=EPOCH -v label=TEXT -f path_latency.awk PREV.prom NOW.prom
function path_of(line) {
  match(line, /path="[^"]*"/)
  return substr(line, RSTART + 6, RLENGTH - 7)
}
function q(p, want, i, rank, lo, prev, total) {
  total = cum[p, nb[p]] - pcum[p, nb[p]]
  if (total <= 0) return "-"
  rank = want * total
  prev = 0
  for (i = 1; i <= nb[p]; i++) {
    c = cum[p, i] - pcum[p, i]
    if (c >= rank) break
    prev = c
  }
  if (i > nb[p] || le[p, i] == "+Inf") return sprintf("%.2f", le[p, i - 1] * 1000)
  lo = i > 1 ? le[p, i - 1] : 0
  return sprintf("%.2f", (lo + (le[p, i] - lo) * (rank - prev) / (c - prev)) * 1000)
}
# From NOW.prom, pathwise's scoring: read weight, health, advised iopolicy.
FNR != NR && /^pathwise_path_weight\{/ && index($0, "op_group=\"read\"") { w[path_of($0)] = $NF }
FNR != NR && /^pathwise_path_health\{/ && $NF == 1 {
  match($0, /state="[a-z]*"/); st = substr($0, RSTART + 7, RLENGTH - 8); health[path_of($0)] = st
}
FNR != NR && /^pathwise_subsystem_iopolicy_recommended\{/ && $NF == 1 {
  match($0, /iopolicy="[a-z-]*"/); advice = substr($0, RSTART + 10, RLENGTH - 11)
}
index($0, "pathwise_path_io_") != 1 || index($0, "op=\"read\"") == 0 { next }
{
  p = path_of($0)
  now = FNR != NR
  if ($0 ~ /^pathwise_path_io_completed_total/) { if (now) n[p] = $NF; else pn[p] = $NF; paths[p] = 1 }
  else if ($0 ~ /^pathwise_path_io_time_seconds_total/) { if (now) s[p] = $NF; else ps[p] = $NF }
  else if ($0 ~ /^pathwise_path_io_latency_seconds_bucket/) {
    match($0, /le="[^"]*"/)
    l = substr($0, RSTART + 4, RLENGTH - 5)
    if (now) { nb[p]++; le[p, nb[p]] = l; cum[p, nb[p]] = $NF }
    else { pb[p]++; pcum[p, pb[p]] = $NF }
  }
}
END {
  dt = t1 - t0
  line = ""
  for (p in paths) sorted[++k] = p
  for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
  for (i = 1; i <= k; i++) {
    p = sorted[i]; dn = n[p] - pn[p]; ds = s[p] - ps[p]
    line = line sprintf("  %s %5.0f IOPS mean %6.2f p50 %6s p99 %6s ms w %2s %-8s", p,
      dt > 0 ? dn / dt : 0, dn > 0 ? ds / dn * 1000 : 0, q(p, 0.5), q(p, 0.99),
      p in w ? w[p] : "-", p in health ? health[p] : "-")
  }
  printf "%-24s%s  advice %s\n", label, line, advice ? advice : "-"
}
