#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the fleet cases of promtool's rule tests:
  pathwise-fleet.test.yml (shipped thresholds) and
  override/fleet-thresholds.test.yml (thresholds set by override-threshold.sh).
Synthetic hosts, each with its own src_addr (the target port's address must be
stripped of it to be shared), one health StateSet per path.
  deploy/prometheus/tests/gen-fleet-tests.py           # rewrite both files
  deploy/prometheus/tests/gen-fleet-tests.py --check   # exit 1 if one is stale
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NQN = "nqn.2026-11.io.pathwise:fleet"
PORT = {p: f"traddr=10.0.{i}.1,trsvcid=4420" for i, p in enumerate("ABCDE")}
J = 'job="pathwise"'

def host(name, paths, n=13, subsys="nvme-subsys0"):
    """paths: list of (port, state) with state healthy|degraded|failed|idle.
    Returns input series for one host; src_addr differs per host."""
    inst = f"{name}:9877"
    out = [dict(series=f'pathwise_subsystem_info{{{J},instance="{inst}",subsystem="{subsys}",nqn="{NQN}",iopolicy="round-robin",model="Linux",serial="1"}}', values=f"1x{n}")]
    hid = sum(map(ord, name)) % 200 + 10
    for i, (port, state) in enumerate(paths):
        path, ctrl = f"nvme0c{i}n1", f"nvme{i}"
        base = f'{J},instance="{inst}",subsystem="{subsys}",head="nvme0n1",path="{path}",controller="{ctrl}"'
        addr = f"{PORT[port]},src_addr=10.{hid}.{i}.1"
        out.append(dict(series=f'pathwise_path_info{{{base},transport="tcp",address="{addr}"}}', values=f"1x{n}"))
        for s in ("healthy", "degraded", "failed", "idle"):
            out.append(dict(series=f'pathwise_path_health{{{base},state="{s}"}}', values=f"{1 if s == state else 0}x{n}"))
    return out

def dump(tests, header, rule_file):
    lines = [header, "rule_files:", f"  - {rule_file}", "evaluation_interval: 15s", "", "tests:"]
    for t in tests:
        lines.append("  - name: " + json.dumps(t["name"]))
        lines.append("    interval: 15s")
        lines.append("    input_series:")
        for s in t["series"]:
            lines.append(f"      - series: '{s['series']}'")
            lines.append(f"        values: '{s['values']}'")
        if t.get("promql"):
            lines.append("    promql_expr_test:")
            for e in t["promql"]:
                lines.append(f"      - expr: '{e['expr']}'")
                lines.append(f"        eval_time: {e.get('at','2m')}")
                lines.append("        exp_samples:")
                for smp in e["samples"]:
                    lines.append(f"          - labels: '{smp[0]}'")
                    lines.append(f"            value: {smp[1]}")
        lines.append("    alert_rule_test:")
        for a in t["alerts"]:
            lines.append(f"      - eval_time: {a.get('at','2m')}")
            lines.append(f"        alertname: {a['name']}")
            if not a["exp"]:
                lines.append("        exp_alerts: []")
                continue
            lines.append("        exp_alerts:")
            for e in a["exp"]:
                lines.append("          - exp_labels: " + json.dumps(e["labels"]))
                if "ann" in e:
                    lines.append("            exp_annotations:")
                    lines.append(f"              runbook_url: \"docs/alerts.md#{a['name'].lower()}\"")
                    for k, v in e["ann"].items():
                        lines.append(f"              {k}: {json.dumps(v)}")
    return "\n".join(lines) + "\n"

def tp_alert(port, pct, deg, active):
    a = PORT[port]
    return dict(labels=dict(severity="warning", nqn=NQN, address=a), ann=dict(
        summary=f"Target side: NVMe target port {a} of {NQN} is degraded for {pct} of its hosts",
        description=f"{deg} of the {active} hosts that use target port {a} of subsystem {NQN} see their path to it degraded or failed: the fault is on the target side (the port, its controller, or the fabric in front of it), not on one host. The per-path alerts of those hosts' paths to this port carry the same nqn and address; the Alertmanager inhibit example (deploy/alertmanager/inhibit-example.yml) holds them back while this fires."))

def hp_alert(name, pct):
    i = f"{name}:9877"
    return dict(labels=dict(severity="warning", job="pathwise", instance=i), ann=dict(
        summary=f"Host side: {i} sees {pct} of its NVMe paths degraded, to several target ports",
        description=f"{i} sees {pct} of its paths in use degraded or failed, to several target ports, while most other hosts that use those ports do not: the fault is on the host side (its NIC or HBA, cabling, CPU or memory pressure), not on a target. Paths to a port that PathwiseTargetPortDegraded explains are not counted here; instance:pathwise_paths_degraded:count and instance:pathwise_target_ports_degraded:count count them all."))

def deg_alert(name, i, port):
    inst, path, ctrl = f"{name}:9877", f"nvme0c{i}n1", f"nvme{i}"
    return dict(labels=dict(severity="warning", job="pathwise", instance=inst, subsystem="nvme-subsys0", head="nvme0n1",
        path=path, controller=ctrl, state="degraded", nqn=NQN, address=PORT[port]), ann=dict(
        summary=f"NVMe path {path} on {inst} is degraded",
        description=f"Path {path} (controller {ctrl}) of head nvme0n1 in subsystem nvme-subsys0 on {inst} has been degraded for 1m: its latency EWMA is at least 3x its best usable sibling's, or it had failovers or path-related NVMe errors."))

def failed_alert(name, i, port, subsys="nvme-subsys0"):
    inst, path, ctrl = f"{name}:9877", f"nvme0c{i}n1", f"nvme{i}"
    return dict(labels=dict(severity="warning", job="pathwise", instance=inst, subsystem=subsys, head="nvme0n1",
        path=path, controller=ctrl, nqn=NQN, address=PORT[port]), ann=dict(
        summary=f"NVMe path {path} on {inst} has failed",
        description=f"Path {path} (controller {ctrl}) of head nvme0n1 in subsystem {subsys} on {inst} is not usable: its ANA state is inaccessible or persistent-loss, or controller {ctrl} is not live. I/O goes over the remaining paths."))

FLEET = ("PathwiseTargetPortDegraded", "PathwiseHostPathsDegraded")
def only(name, exp, at="2m"):
    return [dict(name=n, at=at, exp=exp if n == name else []) for n in FLEET]

H = 'nqn="%s",address="%s"'
tests = []
# 1. target side
series = (host("node-a", [("A", "degraded"), ("B", "degraded")]) + host("node-b", [("A", "degraded"), ("B", "healthy")])
          + host("node-c", [("A", "failed"), ("B", "healthy")], subsys="nvme-subsys3") + host("node-d", [("A", "healthy"), ("B", "healthy")]))
# node-c names the subsystem nvme-subsys3: hosts share its NQN, not its kernel name.
tests.append(dict(name="target side: 3 of the 4 hosts of port A see it degraded or failed: only PathwiseTargetPortDegraded, for A",
    series=series,
    promql=[
        dict(expr="nqn_address:pathwise_hosts:count", samples=[(f'{{__name__="nqn_address:pathwise_hosts:count",{H % (NQN, PORT[p])}}}', 4) for p in "AB"]),
        dict(expr="nqn_address:pathwise_hosts_degraded:count", samples=[(f'{{__name__="nqn_address:pathwise_hosts_degraded:count",{H % (NQN, PORT["A"])}}}', 3), (f'{{__name__="nqn_address:pathwise_hosts_degraded:count",{H % (NQN, PORT["B"])}}}', 1)]),
        dict(expr="nqn_address:pathwise_hosts_degraded:ratio", samples=[(f'{{__name__="nqn_address:pathwise_hosts_degraded:ratio",{H % (NQN, PORT["A"])}}}', 0.75), (f'{{__name__="nqn_address:pathwise_hosts_degraded:ratio",{H % (NQN, PORT["B"])}}}', 0.25)]),
        dict(expr="instance:pathwise_paths_degraded:ratio", samples=[(f'{{__name__="instance:pathwise_paths_degraded:ratio",job="pathwise",instance="node-{h}:9877"}}', v) for h, v in zip("abcd", (1, 0.5, 0.5, 0))]),
        dict(expr="instance:pathwise_target_ports_degraded:count", samples=[(f'{{__name__="instance:pathwise_target_ports_degraded:count",job="pathwise",instance="node-{h}:9877"}}', v) for h, v in zip("abcd", (2, 1, 1, 0))]),
    ],
    alerts=only("PathwiseTargetPortDegraded", [tp_alert("A", "75%", 3, 4)]) + [
        dict(name="PathwisePathDegraded", exp=[deg_alert("node-a", 0, "A"), deg_alert("node-a", 1, "B"), deg_alert("node-b", 0, "A")]),
        dict(name="PathwisePathFailed", exp=[failed_alert("node-c", 0, "A", "nvme-subsys3")])]))
# 2. host side
series = (host("node-a", [("A", "degraded"), ("B", "failed"), ("C", "degraded"), ("D", "healthy")])
          + sum((host(f"node-{h}", [("A", "healthy"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy")]) for h in "bcd"), []))
tests.append(dict(name="host side: node-a sees 3 of its 4 paths, to 3 ports, degraded: only PathwiseHostPathsDegraded, for node-a",
    series=series, alerts=only("PathwiseHostPathsDegraded", [hp_alert("node-a", "75%")])))
# 3. one path
series = (host("node-a", [("A", "degraded"), ("B", "healthy")]) + host("node-b", [("A", "healthy"), ("B", "healthy")])
          + host("node-c", [("A", "healthy"), ("B", "healthy")]))
tests.append(dict(name="one degraded path on one host fires neither fleet alert", series=series,
    alerts=[dict(name=n, exp=[]) for n in FLEET]))
# 4. port share edge: 2 of 4 in use (plus an idle one) fires; 2 of 5 does not
series = (host("node-a", [("A", "degraded")]) + host("node-b", [("A", "failed")]) + host("node-c", [("A", "healthy")])
          + host("node-d", [("A", "healthy")]) + host("node-e", [("A", "idle")])
          + host("node-f", [("B", "degraded")]) + host("node-g", [("B", "degraded")]) + sum((host(f"node-{h}", [("B", "healthy")]) for h in "hij"), []))
tests.append(dict(name="port share at its edge: 2 of the 4 hosts using A (an idle one not counted) fire, 2 of 5 using B do not",
    series=series,
    promql=[dict(expr="nqn_address:pathwise_hosts:count", samples=[(f'{{__name__="nqn_address:pathwise_hosts:count",{H % (NQN, PORT[p])}}}', 5) for p in "AB"]),
            dict(expr="nqn_address:pathwise_hosts_active:count", samples=[(f'{{__name__="nqn_address:pathwise_hosts_active:count",{H % (NQN, PORT[p])}}}', n) for p, n in (("A", 4), ("B", 5))])],
    alerts=only("PathwiseTargetPortDegraded", [tp_alert("A", "50%", 2, 4)])))
# 5. host count edge: 1 of 1 does not fire (a host alone cannot tell); 2 of 2 fires
series = (host("node-a", [("A", "degraded"), ("C", "healthy"), ("D", "healthy")])
          + host("node-b", [("B", "degraded"), ("C", "healthy"), ("D", "healthy")]) + host("node-c", [("B", "degraded"), ("C", "healthy"), ("D", "healthy")]))
tests.append(dict(name="host count at its edge: A degraded for its only host does not fire, B for both of its 2 hosts fires", series=series,
    alerts=only("PathwiseTargetPortDegraded", [tp_alert("B", "100%", 2, 2)])))
# 6. host share and port count edges
series = (host("node-a", [("A", "degraded"), ("B", "degraded"), ("C", "healthy"), ("D", "healthy")])
          + host("node-b", [("A", "degraded"), ("A", "degraded"), ("C", "healthy"), ("D", "idle")])
          + host("node-c", [("A", "degraded"), ("B", "degraded"), ("C", "healthy"), ("D", "healthy"), ("E", "healthy")])
          + sum((host(f"node-{h}", [("A", "healthy"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy"), ("E", "healthy")]) for h in "defghij"), []))
tests.append(dict(name="host share and port count at their edges: 2 of 4 paths to 2 ports fire; 2 of 3 to one port, 2 of 5 do not",
    series=series, alerts=only("PathwiseHostPathsDegraded", [hp_alert("node-a", "50%")])))
# 7. both at once
series = (host("node-a", [("A", "degraded"), ("B", "degraded"), ("C", "failed"), ("D", "healthy")])
          + host("node-b", [("A", "degraded"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy")])
          + host("node-c", [("A", "failed"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy")])
          + host("node-d", [("A", "healthy"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy")]))
tests.append(dict(name="a host-side fault during a target-side one: both fire, the host's path to the degraded port left out of its share",
    series=series, alerts=[dict(name="PathwiseTargetPortDegraded", exp=[tp_alert("A", "75%", 3, 4)]),
                           dict(name="PathwiseHostPathsDegraded", exp=[hp_alert("node-a", "50%")])]))
# 8. short
series = host("node-a", [("A", "degraded"), ("B", "degraded")], n=3) + host("node-b", [("A", "degraded"), ("B", "healthy")], n=3) + host("node-c", [("A", "healthy"), ("B", "healthy")], n=3)
tests.append(dict(name="conditions shorter than their for: fire nothing", series=series,
    alerts=[dict(name="PathwiseTargetPortDegraded", at="15s", exp=[]), dict(name="PathwiseHostPathsDegraded", at="45s", exp=[])]))
header = """# GENERATED by deploy/prometheus/tests/gen-fleet-tests.py: edit that, rerun it.
# promtool test rules for the fleet group of deploy/prometheus/pathwise-rules.yml:
# synthetic series of several hosts (each with its own src_addr, so the
# target port's address must be stripped of it to be shared), the shipped
# thresholds (share 0.5, 2 hosts; host share 0.5, 2 ports) at their edges;
# one health StateSet per path (healthy, degraded, failed, idle)."""
OUT = {"pathwise-fleet.test.yml": dump(tests, header, "../pathwise-rules.yml")}

# Overridden thresholds (rules-test.sh writes the copy with override-threshold.sh):
# port share 0.75 and 3 hosts; host share 0.75 and 3 ports.
ov = []
series = (sum((host(f"node-a{h}", [("A", "degraded"), ("E", "healthy")]) for h in "12"), [])
          + sum((host(f"node-b{h}", [("B", "degraded" if h != "4" else "healthy"), ("E", "healthy")]) for h in "1234"), [])
          + sum((host(f"node-c{h}", [("C", "degraded" if h in "123" else "healthy"), ("E", "healthy")]) for h in "12345"), []))
ov.append(dict(name="overridden port thresholds (0.75, 3 hosts): 2 of 2 and 3 of 5 do not fire, 3 of 4 does", series=series,
    alerts=only("PathwiseTargetPortDegraded", [tp_alert("B", "75%", 3, 4)])))
series = (host("node-x", [("A", "degraded"), ("B", "degraded"), ("C", "failed"), ("D", "healthy")])
          + host("node-y", [("A", "healthy"), ("B", "degraded"), ("C", "healthy"), ("D", "degraded")])
          + host("node-z", [("E", "degraded"), ("C", "degraded"), ("D", "degraded"), ("A", "healthy"), ("B", "healthy")])
          + sum((host(f"node-{h}", [("A", "healthy"), ("B", "healthy"), ("C", "healthy"), ("D", "healthy"), ("E", "healthy")]) for h in "defghij"), []))
ov.append(dict(name="overridden host thresholds (0.75, 3 ports): 3 of 4 to 3 ports fires, 2 of 4 and 3 of 5 do not", series=series,
    alerts=only("PathwiseHostPathsDegraded", [hp_alert("node-x", "75%")])))
header = """# GENERATED by deploy/prometheus/tests/gen-fleet-tests.py: edit that, rerun it.
# promtool test rules for deploy/prometheus/override-threshold.sh: run by
# tests/deploy/rules-test.sh against a copy of the shipped rules with
#   pathwise_target_port_degraded_hosts:min_ratio=0.75 min_count=3
#   pathwise_host_degraded_paths:min_ratio=0.75
#   pathwise_host_degraded_target_ports:min_count=3
# written next to this file as rules.yml in a temporary directory. Each case
# would come out differently with the shipped thresholds."""
OUT["override/fleet-thresholds.test.yml"] = dump(ov, header, "rules.yml")

stale = 0
for name, text in OUT.items():
    path = os.path.join(HERE, name)
    if sys.argv[1:] == ["--check"]:
        if not os.path.exists(path) or open(path).read() != text:
            print(f"stale: deploy/prometheus/tests/{name} (run deploy/prometheus/tests/gen-fleet-tests.py)")
            stale += 1
    else:
        with open(path, "w") as f:
            f.write(text)
sys.exit(1 if stale else 0)
