"""two-step-py: a flowgate controller plugin in Python.

It runs two tasks in sequence, records each one's result in the flow's
state with the revision it read, fails the flow with a reason when a task
fails, and starts nothing once the flow is being cancelled. It speaks the
protocol of docs/protocol.md with Debian's python3-grpcio and
python3-protobuf; the stubs under gen/ are generated (see README.md).

The commands come from the flow's state, {"steps": ["cmd one", "cmd two"]},
or default to two echo commands. A flow whose state asks for a follow-up,
{"follow_up": "a goal"}, gets one when its steps have succeeded: a flow
this controller creates (Host.CreateFlow) and drives in turn.

It also provides a pipeline stage, two-step-py.shout, which upper-cases
the string items a pipeline gives it (section 6, Stages).
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402

from flowgate.controller.v1 import controller_pb2 as pb  # noqa: E402
from flowgate.controller.v1 import controller_pb2_grpc as pb_grpc  # noqa: E402

NAME = "two-step-py"
VERSION = "1.0.0"
API_VERSION = 1
COOKIE_KEY = "FLOWGATE_PLUGIN"
COOKIE_VALUE = "b75f8208e7302fd06ed826dbb7da677462f783b06d7246fa"
DEFAULT_STEPS = ["echo step one", "echo step two"]
TERMINAL_FLOW = {"succeeded", "failed", "partial", "cancelled", "lost"}
TERMINAL_TASK = {"succeeded", "blocked", "failed", "timed_out", "cancelled", "lost"}
LEVELS = ["trace", "debug", "info", "warn", "error"]
# The stage is named after the plugin, so that two plugins started from
# this example can run in one gateway: a stage name has one provider.
SHOUT = NAME + ".shout"


def log(level, message, **fields):
    """One hclog-style JSON line on stderr (docs/protocol.md, section 1)."""
    wanted = os.environ.get("FLOWGATE_LOG_LEVEL", "info")
    if wanted in LEVELS and LEVELS.index(level) < LEVELS.index(wanted):
        return
    line = {"@level": level, "@message": message,
            "@timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())}
    line.update(fields)
    sys.stderr.write(json.dumps(line) + "\n")
    sys.stderr.flush()


def error_code(err):
    """The flowgate code of a refused Host call (section 5), or ""."""
    for key, value in err.trailing_metadata() or ():
        if key == "flowgate-error-code":
            return value
    return ""


class Host:
    """The gateway's HostService, dialled once in Setup (section 2)."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.HostServiceStub(self.channel)

    def flow(self, flow_id):
        return json.loads(self.stub.GetFlow(pb.GetFlowRequest(flow_id=flow_id)).flow_json)

    def tasks(self, flow_id):
        reply = self.stub.ListTasks(pb.ListTasksRequest(flow_id=flow_id))
        return [json.loads(t) for t in reply.tasks_json]


class Controller(pb_grpc.ControllerServiceServicer):
    def __init__(self, stop):
        self.stop = stop
        self.host = None
        self.lock = threading.Lock()

    def GetInfo(self, request, context):
        return pb.GetInfoResponse(name=NAME, version=VERSION, api_version=API_VERSION, stages=[
            pb.StageInfo(name=SHOUT, description="Upper-case each string item; other items pass unchanged")])

    def Setup(self, request, context):
        with self.lock:
            old, self.host = self.host, Host(request.host_address)
        if old is not None:
            old.channel.close()
        return pb.SetupResponse()

    def Shutdown(self, request, context):
        self.stop.set()
        return pb.ShutdownResponse()

    def HandleEvent(self, request, context):
        event = json.loads(request.event_json)
        with self.lock:
            host = self.host
        if host is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "HandleEvent before Setup")
        try:
            react(host, event)
        except grpc.RpcError as err:
            # A refused or failed Host call fails the event: it comes
            # again, and react decides anew from the flow as it is then.
            code = error_code(err) or err.code().name
            log("warn", "host call refused; the event will come again", flow_id=event["flow_id"],
                seq=event["seq"], code=code, error=err.details())
            context.abort(grpc.StatusCode.ABORTED, f"host call refused ({code}): {err.details()}")
        return pb.HandleEventResponse()

    def RunStage(self, request, context):
        """Run a pipeline stage: items in, items out, one JSON array each.
        It changes nothing outside, so running it again with the same key
        (after a gateway crash) is harmless."""
        if request.name != SHOUT:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{NAME} provides stage {SHOUT}, not {request.name}")
        try:
            items = json.loads(request.items_json or b"[]")
        except ValueError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"stage {SHOUT}: the items are not JSON: {err}")
        if not isinstance(items, list):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"stage {SHOUT}: the items are not a JSON array")
        out = [i.upper() if isinstance(i, str) else i for i in items]
        return pb.RunStageResponse(items_json=json.dumps(out).encode())


def react(host, event):
    """Decide what to do from the flow and its tasks as they are now, so a
    repeated event changes nothing (section 3, at least once)."""
    flow_id = event["flow_id"]
    flow = host.flow(flow_id)
    if flow["status"] in TERMINAL_FLOW or flow.get("cancel_requested_at"):
        return  # ended, or being cancelled: start nothing new
    state = flow.get("state") or {}
    steps = state.get("steps") or DEFAULT_STEPS
    if flow["status"] == "queued":
        flow = json.loads(host.stub.Resume(pb.ResumeRequest(
            flow_id=flow_id, expected_revision=flow["revision"], status="running")).flow_json)
    by_key = {t.get("idempotency_key"): t for t in host.tasks(flow_id)}
    results = []
    for n, command in enumerate(steps[:2]):
        key = f"{flow_id}:step-{n + 1}"
        task = by_key.get(key)
        if task is None:
            start_step(host, flow, state, n, command, results)
            return
        if task["status"] not in TERMINAL_TASK:
            return  # still running: its task.finished comes later
        if task["status"] != "succeeded":
            code = task.get("exit_code")
            reason = f"step {n + 1} ({command}) {task['status']}" + ("" if code is None else f" with exit code {code}")
            host.stub.Fail(pb.EndRequest(flow_id=flow_id, expected_revision=flow["revision"],
                                         current_step=f"step-{n + 1}", blocked_task_id=task["id"],
                                         blocked_summary=reason))
            log("info", "flow failed", flow_id=flow_id, reason=reason)
            return
        results.append((task.get("result") or {}).get("summary", ""))
    if state.get("follow_up"):
        create_follow_up(host, flow, state["follow_up"])
    state = dict(state, results=results)
    host.stub.Finish(pb.EndRequest(flow_id=flow_id, expected_revision=flow["revision"],
                                   current_step="done", state=json.dumps(state).encode()))
    log("info", "flow succeeded", flow_id=flow_id)


def start_step(host, flow, state, n, command, results):
    """Record the results so far and the step about to run, with the
    revision read, then create its task under a stable idempotency key."""
    state = dict(state, results=results)
    host.stub.UpdateFlow(pb.UpdateFlowRequest(
        flow_id=flow["id"], expected_revision=flow["revision"],
        state=json.dumps(state).encode(), current_step=f"step-{n + 1}"))
    try:
        host.stub.CreateTask(pb.CreateTaskRequest(
            flow_id=flow["id"], idempotency_key=f"{flow['id']}:step-{n + 1}", label=f"step {n + 1}",
            spec_json=json.dumps({"shell": command}).encode()))
    except grpc.RpcError as err:
        if error_code(err) != "cancel_requested":
            raise
        # Cancelled meanwhile: start nothing, acknowledge.


def create_follow_up(host, flow, goal):
    """Create the flow's follow-up under a key derived from the flow, so
    that asking again (this event again, after a crash or a lost answer)
    returns the same flow with created false."""
    reply = host.stub.CreateFlow(pb.CreateFlowRequest(
        idempotency_key=f"{flow['id']}:follow-up", goal=goal, owner_key=flow["owner_key"],
        parent_flow_id=flow["id"]))
    follow_up = json.loads(reply.flow_json)
    log("info", "follow-up flow", flow_id=flow["id"], follow_up=follow_up["id"], created=reply.created)


def watch_parent(stop):
    """Exit when the gateway is gone (section 6)."""
    parent = os.getppid()
    while not stop.wait(1):
        if os.getppid() != parent:
            log("warn", "the gateway that started this plugin is gone; exiting")
            stop.set()


def main():
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This is a flowgate controller plugin: name it under plugins: in the gateway config, "
                         "or check it with flowgate plugins test.\n")
        return 1
    if "1" not in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "1").split(","):
        sys.stderr.write("The gateway does not speak app protocol version 1.\n")
        return 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # SIGINT is the gateway's; it stops us with Shutdown
    stop = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    pb_grpc.add_ControllerServiceServicer_to_server(Controller(stop), server)
    # PLUGIN_UNIX_SOCKET_DIR is the gateway's socket directory, which it
    # clears of what a killed gateway's plugins leave behind.
    sock_dir = tempfile.mkdtemp(prefix="two-step-py-", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    sock = os.path.join(sock_dir, "plugin.sock")
    server.add_insecure_port("unix://" + sock)
    server.start()
    sys.stdout.write(f"1|1|unix|{sock}|grpc|\n")
    sys.stdout.flush()
    threading.Thread(target=watch_parent, args=(stop,), daemon=True).start()
    stop.wait()
    server.stop(grace=1).wait()
    shutil.rmtree(sock_dir, ignore_errors=True)
    os.remove(sock)
    os.rmdir(os.path.dirname(sock))
    return 0


if __name__ == "__main__":
    sys.exit(main())
