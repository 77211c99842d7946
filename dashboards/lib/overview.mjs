// SPDX-License-Identifier: Apache-2.0
// @ts-check
// pathwise / Overview: per node and subsystem, what is wrong now.
import {
  I, S, RI, ACTUATOR, dashboard, target, tableTarget, tablePanel, bars, ts, thresholds, hq, item, row,
  stateCode, timeline,
} from "./common.mjs";
import { datapathRow } from "./datapath.mjs";

const PROBES = "probes on (`--probe-interval` > 0, the default, and read access to /dev/nvmeX)";
const QUEUES = "`serve --queues`";
// The controllers of the selected subsystems (probes and flows have only a
// controller label).
const OF_SUBSYS = `and on (instance, controller) pathwise_controller_info{${S}}`;

export function overview() {
  return dashboard("pathwise-overview", "pathwise / Overview",
    "NVMe native multipath, per node and subsystem: path health, ANA and controller states, latency imbalance, firing alerts, controller probes, the iopolicy actuator, NVMe/TCP queues and flows, the userspace datapath.",
    ["datasource", "instance", "subsystem"], [
      tablePanel("Firing pathwise alerts", [7, 24], [tableTarget(
        'sum by (alertname, severity, instance, subsystem, head, path, controller) (ALERTS{alertname=~"Pathwise.*",alertstate="firing"})')]),
      bars("Paths by health", [8, 8], [target(
        `count by (instance, subsystem, state) (pathwise_path_health{${S}} == 1)`, "{{instance}} {{subsystem}} {{state}}")]),
      bars("Paths by ANA state", [8, 8], [target(
        `count by (instance, subsystem, state) (pathwise_path_ana_state{${S}} == 1)`, "{{instance}} {{subsystem}} {{state}}")]),
      bars("Controllers by state", [8, 8], [target(
        `count by (instance, state) ((pathwise_controller_state{${I}} == 1) and on (instance, controller) pathwise_controller_info{${S}})`,
        "{{instance}} {{state}}")]),
      ts("Head latency imbalance (worst usable EWMA / best)", [8, 12], [target(
        `pathwise_head_latency_imbalance_ratio{${S}}`, "{{instance}} {{head}}")], "none")
        .thresholds(thresholds([["green", null], ["red", 3]])),
      ts("Head IOPS", [8, 12], [target(
        `sum by (instance, head) (rate(pathwise_path_io_completed_total{${S}}[${RI}]))`, "{{instance}} {{head}}")], "iops"),
      tablePanel("Subsystems: iopolicy and recommendation", [7, 16], [
        tableTarget(`pathwise_subsystem_info{${S}}`),
        tableTarget(`pathwise_subsystem_iopolicy_recommended{${S}} == 1`),
      ]),
      tablePanel("Agents: sampler and collectors", [7, 8], [
        tableTarget(`pathwise_sampler_info{${I}}`),
        tableTarget(`min by (instance, collector) (pathwise_collector_success{${I}})`),
      ]),

      row("Controller probes (Identify Controller round trip)"),
      item(ts("Probe p50 / p99 latency per controller", [8, 12], [
        target(hq(0.5, "pathwise_controller_probe_latency_seconds", I, "instance, controller", OF_SUBSYS), "p50 {{instance}} {{controller}}"),
        target(hq(0.99, "pathwise_controller_probe_latency_seconds", I, "instance, controller", OF_SUBSYS), "p99 {{instance}} {{controller}}"),
      ], "s", "The controller's own answer time, without the block layer and the path's queue: slow probes with slow I/O point at the target or the network, fast probes with slow I/O at the host's queueing."), PROBES),
      item(ts("Probe failures per controller by reason", [8, 12], [target(
        `sum by (instance, controller, reason) (rate(pathwise_controller_probe_failures_total{${I}}[${RI}]) ${OF_SUBSYS})`,
        "{{instance}} {{controller}} {{reason}}")], "ops",
        "timeout and transport make the controller's paths failed; unavailable means pathwise could not send probes (no /dev/nvmeX, no permission, no io_uring)."), PROBES),

      row("Active mode: the iopolicy actuator"),
      timeline("Actuator mode", [6, 8], stateCode("pathwise_actuator_mode", I, ACTUATOR, "instance", "mode"),
        "{{instance}}", ACTUATOR),
      item(ts("Actuator decisions", [6, 16], [target(
        `sum by (instance, subsystem, from, to, result) (increase(pathwise_actuator_decisions_total{${S}}[${RI}])) > 0`,
        "{{instance}} {{subsystem}} {{from}} → {{to}} {{result}}")], "none",
        "Each point a decision: applied (written and read back), dry_run, refused (the kernel rejected the policy), failed; restores on exit included."),
        "`--actuate=dry-run` or `on`, once it decided something"),

      row("NVMe/TCP queues and flows"),
      item(tablePanel("Queue mismatches and BPF queue map", [7, 8], [
        tableTarget(`pathwise_queue_mismatches{${I}}`),
        tableTarget(`pathwise_queue_map_bpf{${I}}`),
      ], "rx_irq_off_worker: a flow's RX IRQ is not on its io_cpu; shared_nic_queue: one NIC queue carries several I/O queues; oversubscribed: more I/O queues than the device has queue pairs (`pathwise queues --plan`)."), QUEUES),
      item(ts("I/O queues and TCP flows per controller", [7, 16], [
        target(`pathwise_queue_io_queues{${I}} ${OF_SUBSYS}`, "I/O queues {{instance}} {{controller}}"),
        target(`pathwise_queue_flows{${I}} ${OF_SUBSYS}`, "flows {{instance}} {{controller}}"),
      ], "none", "A controller with fewer flows than I/O queues is reconnecting or lost connections."), QUEUES),
      item(ts("Flow RTT (worst per controller)", [8, 12], [target(
        `max by (instance, controller) (pathwise_flow_rtt_seconds{${I}} ${OF_SUBSYS})`, "{{instance}} {{controller}}")], "s"), QUEUES),
      item(ts("Flow retransmitted segments per controller", [8, 12], [target(
        `sum by (instance, controller) (rate(pathwise_flow_retransmitted_segments_total{${I}}[${RI}]) ${OF_SUBSYS})`,
        "{{instance}} {{controller}}")], "ops"), QUEUES),
      item(ts("Flow throughput per controller (sent, received)", [8, 12], [
        target(`sum by (instance, controller) (rate(pathwise_flow_sent_bytes_total{${I}}[${RI}]) ${OF_SUBSYS})`, "sent {{instance}} {{controller}}"),
        target(`sum by (instance, controller) (rate(pathwise_flow_received_bytes_total{${I}}[${RI}]) ${OF_SUBSYS})`, "received {{instance}} {{controller}}"),
      ], "Bps"), QUEUES),
      item(ts("Flow backlog per controller (unacked segments, not-sent bytes)", [8, 12], [
        target(`sum by (instance, controller) (pathwise_flow_unacked_segments{${I}} ${OF_SUBSYS})`, "unacked segments {{instance}} {{controller}}"),
        target(`sum by (instance, controller) (pathwise_flow_notsent_bytes{${I}} ${OF_SUBSYS})`, "not-sent bytes {{instance}} {{controller}}"),
      ], "none", "Data the host queued but the target has not taken: a growing backlog on one controller's flows is a congested or stalled connection."), QUEUES),

      row("Hardware queues (blk-mq hctx = NVMe I/O queue)"),
      item(ts("I/Os completed per hardware queue", [8, 12], [target(
        `sum by (instance, path, qid) (rate(pathwise_queue_hctx_completed_total{${I}}[${RI}]) ${OF_SUBSYS})`,
        "{{instance}} {{path}} q{{qid}}")], "iops",
        "How evenly the submitting CPUs spread I/O over a path's queues: each queue serves the CPUs in pathwise_queue_hctx_cpus."), QUEUES),
      item(ts("p99 latency per hardware queue", [8, 12], [target(
        hq(0.99, "pathwise_queue_hctx_latency_seconds", I, "instance, path, qid", OF_SUBSYS), "p99 {{instance}} {{path}} q{{qid}}")], "s",
        "One slow queue among fast ones on the same path is a host-side fault: its CPU, its flow or its NIC queue (the queue table above)."), QUEUES),
      item(ts("Mean I/Os in flight per hardware queue", [8, 12], [target(
        `histogram_sum(sum by (instance, path, qid) (rate(pathwise_queue_hctx_latency_seconds{${I}}[${RI}]) ${OF_SUBSYS}))\nor\n` +
        `sum by (instance, path, qid) (rate(pathwise_queue_hctx_latency_seconds_sum{${I}}[${RI}]) ${OF_SUBSYS})`,
        "{{instance}} {{path}} q{{qid}}")], "none",
        "Little's law: the latency sum's rate is the mean number in flight over the interval (iostat's aqu-sz), not an instantaneous gauge."), QUEUES),
      item(ts("Completions on another CPU than the submitter's (share per queue)", [8, 12], [target(
        `sum by (instance, path, qid) (rate(pathwise_queue_hctx_remote_completions_total{${I}}[${RI}]) ${OF_SUBSYS})\n/\n` +
        `sum by (instance, path, qid) (rate(pathwise_queue_hctx_completed_total{${I}}[${RI}]) ${OF_SUBSYS})`,
        "{{instance}} {{path}} q{{qid}}")], "percentunit",
        "Completions whose IRQ or worker ran on another CPU than the one that submitted them (rq_affinity=2 moves every one back, 1 those on CPUs that share no cache with the submitter): a high share means the queue's IRQ is away from the CPUs it serves."), QUEUES),

      ...datapathRow(),
    ]);
}
