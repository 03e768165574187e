// two-step-ts: a flowgate controller plugin in TypeScript.
//
// It runs two tasks in sequence, records each one's result in the flow's
// state with the revision it read, fails the flow with a reason when a
// task fails, and starts nothing once the flow is being cancelled. It
// speaks the protocol of docs/protocol.md with @grpc/grpc-js, loading the
// .proto it ships with (proto/) at start with @grpc/proto-loader.
//
// The commands come from the flow's state, {"steps": ["cmd one", "cmd two"]},
// or default to two echo commands. A flow whose state asks for a
// follow-up, {"follow_up": "a goal"}, gets one when its steps have
// succeeded: a flow this controller creates (Host.CreateFlow) and drives
// in turn.
//
// It also provides a pipeline stage, two-step-ts.shout, which upper-cases
// the string items a pipeline gives it (section 6, Stages).

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const NAME = "two-step-ts";
const VERSION = "1.0.0";
const API_VERSION = 1;
const COOKIE_KEY = "FLOWGATE_PLUGIN";
const COOKIE_VALUE = "b75f8208e7302fd06ed826dbb7da677462f783b06d7246fa";
const DEFAULT_STEPS = ["echo step one", "echo step two"];
const TERMINAL_FLOW = new Set(["succeeded", "failed", "partial", "cancelled", "lost"]);
const TERMINAL_TASK = new Set(["succeeded", "blocked", "failed", "timed_out", "cancelled", "lost"]);
const LEVELS = ["trace", "debug", "info", "warn", "error"];
// The stage is named after the plugin, so that two plugins started from
// this example can run in one gateway: a stage name has one provider.
const SHOUT = `${NAME}.shout`;

// The records, as records.schema.json describes them (only what is used).
interface Flow {
  id: string;
  owner_key: string;
  revision: number;
  status: string;
  state?: { steps?: string[]; results?: string[]; follow_up?: string; [k: string]: unknown } | null;
  cancel_requested_at?: string;
}

interface Task {
  id: string;
  idempotency_key?: string;
  status: string;
  exit_code?: number | null;
  result?: { summary?: string } | null;
}

interface Event {
  flow_id: string;
  seq: number;
  type: string;
}

/** One hclog-style JSON line on stderr (docs/protocol.md, section 1). */
function log(level: string, message: string, fields: Record<string, unknown> = {}): void {
  const wanted = process.env.FLOWGATE_LOG_LEVEL ?? "info";
  if (LEVELS.includes(wanted) && LEVELS.indexOf(level) < LEVELS.indexOf(wanted)) return;
  process.stderr.write(JSON.stringify({ "@level": level, "@message": message, "@timestamp": new Date().toISOString(), ...fields }) + "\n");
}

// The .proto ships in this folder (a copy of sdk/proto's, which CI keeps
// identical), so the folder works when copied alone.
const protoPath = path.resolve(__dirname, "../proto/flowgate/controller/v1/controller.proto");
const def = protoLoader.loadSync(protoPath, { keepCase: true, longs: Number, defaults: true });
const v1 = (grpc.loadPackageDefinition(def) as any).flowgate.controller.v1;

type Call = (req: object, cb: (err: grpc.ServiceError | null, reply: any) => void) => void;

/** The gateway's HostService, dialled once in Setup (section 2). */
class Host {
  readonly client: grpc.Client & Record<string, Call>;

  constructor(address: string) {
    this.client = new v1.HostService(address, grpc.credentials.createInsecure());
  }

  call<T = any>(method: string, req: object): Promise<T> {
    return new Promise((resolve, reject) =>
      this.client[method].call(this.client, req, (err, reply) => (err ? reject(err) : resolve(reply))),
    );
  }

  async flow(flowId: string): Promise<Flow> {
    return JSON.parse((await this.call("GetFlow", { flow_id: flowId })).flow_json.toString());
  }

  async tasks(flowId: string): Promise<Task[]> {
    const reply = await this.call("ListTasks", { flow_id: flowId });
    return reply.tasks_json.map((b: Buffer) => JSON.parse(b.toString()));
  }
}

/** The flowgate code of a refused Host call (section 5), or "". */
function errorCode(err: unknown): string {
  const md = (err as grpc.ServiceError)?.metadata;
  const v = md?.get("flowgate-error-code")[0];
  return v === undefined ? "" : v.toString();
}

const flowOf = (reply: { flow_json: Buffer }): Flow => JSON.parse(reply.flow_json.toString());
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

/**
 * Decide what to do from the flow and its tasks as they are now, so a
 * repeated event changes nothing (section 3, at least once).
 */
async function react(host: Host, ev: Event): Promise<void> {
  let flow = await host.flow(ev.flow_id);
  if (TERMINAL_FLOW.has(flow.status) || flow.cancel_requested_at) return; // ended, or being cancelled
  const state = flow.state ?? {};
  const steps = state.steps ?? DEFAULT_STEPS;
  if (flow.status === "queued") {
    flow = flowOf(await host.call("Resume", { flow_id: flow.id, expected_revision: flow.revision, status: "running" }));
  }
  const byKey = new Map((await host.tasks(flow.id)).map((t) => [t.idempotency_key, t]));
  const results: string[] = [];
  for (const [n, command] of steps.slice(0, 2).entries()) {
    const key = `${flow.id}:step-${n + 1}`;
    const task = byKey.get(key);
    if (!task) {
      await startStep(host, flow, { ...state, results }, n, command);
      return;
    }
    if (!TERMINAL_TASK.has(task.status)) return; // still running: its task.finished comes later
    if (task.status !== "succeeded") {
      const exit = task.exit_code == null ? "" : ` with exit code ${task.exit_code}`;
      const reason = `step ${n + 1} (${command}) ${task.status}${exit}`;
      await host.call("Fail", {
        flow_id: flow.id, expected_revision: flow.revision, current_step: `step-${n + 1}`,
        blocked_task_id: task.id, blocked_summary: reason,
      });
      log("info", "flow failed", { flow_id: flow.id, reason });
      return;
    }
    results.push(task.result?.summary ?? "");
  }
  if (state.follow_up) await createFollowUp(host, flow, state.follow_up);
  await host.call("Finish", { flow_id: flow.id, expected_revision: flow.revision, current_step: "done", state: json({ ...state, results }) });
  log("info", "flow succeeded", { flow_id: flow.id });
}

/**
 * Create the flow's follow-up under a key derived from the flow, so that
 * asking again (this event again, after a crash or a lost answer) returns
 * the same flow with created false.
 */
async function createFollowUp(host: Host, flow: Flow, goal: string): Promise<void> {
  const reply = await host.call("CreateFlow", {
    idempotency_key: `${flow.id}:follow-up`, goal, owner_key: flow.owner_key, parent_flow_id: flow.id,
  });
  log("info", "follow-up flow", { flow_id: flow.id, follow_up: flowOf(reply).id, created: reply.created });
}

/**
 * Record the results so far and the step about to run, with the revision
 * read, then create its task under a stable idempotency key.
 */
async function startStep(host: Host, flow: Flow, state: object, n: number, command: string): Promise<void> {
  await host.call("UpdateFlow", { flow_id: flow.id, expected_revision: flow.revision, state: json(state), current_step: `step-${n + 1}` });
  try {
    await host.call("CreateTask", {
      flow_id: flow.id, idempotency_key: `${flow.id}:step-${n + 1}`, label: `step ${n + 1}`,
      spec_json: json({ shell: command }),
    });
  } catch (err) {
    if (errorCode(err) !== "cancel_requested") throw err; // cancelled meanwhile: start nothing
  }
}

/** Run the stage over items (one JSON array): its output items, or what
 * is wrong as a string. It changes nothing outside, so running it again
 * with the same key (after a gateway crash) is harmless. */
function shout(name: string, itemsJSON: Buffer): unknown[] | string {
  if (name !== SHOUT) return `${NAME} provides stage ${SHOUT}, not ${name}`;
  let items: unknown;
  try {
    items = JSON.parse(itemsJSON.length ? itemsJSON.toString() : "[]");
  } catch (err) {
    return `stage ${SHOUT}: the items are not JSON: ${err}`;
  }
  if (!Array.isArray(items)) return `stage ${SHOUT}: the items are not a JSON array`;
  return items.map((i) => (typeof i === "string" ? i.toUpperCase() : i));
}

function main(): number {
  if (process.env[COOKIE_KEY] !== COOKIE_VALUE) {
    process.stderr.write("This is a flowgate controller plugin: name it under plugins: in the gateway config, or check it with flowgate plugins test.\n");
    return 1;
  }
  if (!(process.env.PLUGIN_PROTOCOL_VERSIONS ?? "1").split(",").includes("1")) {
    process.stderr.write("The gateway does not speak app protocol version 1.\n");
    return 1;
  }
  process.on("SIGINT", () => {}); // SIGINT is the gateway's; it stops us with Shutdown
  let host: Host | undefined;
  // PLUGIN_UNIX_SOCKET_DIR is the gateway's socket directory, which it
  // clears of what a killed gateway's plugins leave behind.
  const dir = fs.mkdtempSync(path.join(process.env.PLUGIN_UNIX_SOCKET_DIR || os.tmpdir(), "two-step-ts-"));
  const sock = path.join(dir, "plugin.sock");
  const server = new grpc.Server();
  const stop = () => {
    server.tryShutdown(() => {
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  };
  server.addService(v1.ControllerService.service, {
    GetInfo: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {
      name: NAME, version: VERSION, api_version: API_VERSION,
      stages: [{ name: SHOUT, description: "Upper-case each string item; other items pass unchanged" }],
    }),
    Setup: (call: grpc.ServerUnaryCall<{ host_address: string }, object>, cb: grpc.sendUnaryData<object>) => {
      host?.client.close();
      host = new Host(call.request.host_address);
      cb(null, {});
    },
    HandleEvent: (call: grpc.ServerUnaryCall<{ event_json: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      const ev: Event = JSON.parse(call.request.event_json.toString());
      if (!host) return cb({ code: grpc.status.FAILED_PRECONDITION, details: "HandleEvent before Setup" });
      react(host, ev).then(
        () => cb(null, {}),
        (err: grpc.ServiceError) => {
          // A refused or failed Host call fails the event: it comes again,
          // and react decides anew from the flow as it is then.
          const code = errorCode(err) || String(err.code ?? "error");
          log("warn", "host call refused; the event will come again", { flow_id: ev.flow_id, seq: ev.seq, code, error: err.details ?? String(err) });
          cb({ code: grpc.status.ABORTED, details: `host call refused (${code}): ${err.details ?? err}` });
        },
      );
    },
    RunStage: (call: grpc.ServerUnaryCall<{ name: string; items_json: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      const out = shout(call.request.name, call.request.items_json);
      if (typeof out === "string") return cb({ code: grpc.status.INVALID_ARGUMENT, details: out });
      cb(null, { items_json: json(out) });
    },
    Shutdown: (_call: unknown, cb: grpc.sendUnaryData<object>) => {
      cb(null, {});
      setImmediate(stop);
    },
  });
  server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      process.stderr.write(`two-step-ts: listen on ${sock}: ${err.message}\n`);
      process.exit(1);
    }
    process.stdout.write(`1|1|unix|${sock}|grpc|\n`);
  });
  // Exit when the gateway is gone (section 6).
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) {
      log("warn", "the gateway that started this plugin is gone; exiting");
      stop();
    }
  }, 1000).unref();
  return 0;
}

const code = main();
if (code !== 0) process.exit(code);
