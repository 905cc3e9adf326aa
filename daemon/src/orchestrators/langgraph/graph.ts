import { Annotation, END, interrupt, START, StateGraph, type BaseCheckpointSaver, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { MiniAgentError } from "../../errors.js";
import type { ActiveRun } from "../../runtime/active-run.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import { danglingCall, finishPending, nextDecision, proposeCall, verifyAndFinish, type StepOutcome } from "../../runtime/steps.js";
import type { ApprovalPause, ApprovalResume, Entry, Route } from "./routes.js";

/** The graph's state: routing facts only (routes.ts says why). */
export const RouteState = Annotation.Root({
  entry: Annotation<Entry>,
  next: Annotation<Route>,
  /** the action the approval node pauses for */
  action_id: Annotation<string | null>,
  /** the approval node's resume value, kept for the trace of the graph's own state */
  decided: Annotation<ApprovalResume["decision"] | null>,
});
type S = typeof RouteState.State;
type U = typeof RouteState.Update;

/**
 * What a node needs of the drive in progress: found by thread id (= run id),
 * never stored in a checkpoint. `track` registers a host step in progress:
 * LangGraph rejects a call the moment its signal aborts, while the step (a
 * write, a sandbox run, the Verifier) is still finishing; the drive waits for
 * it before it says the run stopped.
 */
export interface DriveContext {
  deps: RuntimeDeps;
  active: ActiveRun;
  track<T>(step: Promise<T>): Promise<T>;
}
export type DriveLookup = (runId: string) => DriveContext;

function runIdOf(config: LangGraphRunnableConfig): string {
  const id = config.configurable?.thread_id;
  if (typeof id !== "string") throw new MiniAgentError("internal", "the graph ran without a thread id");
  return id;
}

/** After a host step: where its outcome leads. "paused" leads to the approval node, for the action the ledger now waits on. */
function after(deps: RuntimeDeps, runId: string, outcome: StepOutcome): U {
  if (outcome === "stopped") return { next: END };
  if (outcome === "paused") return { next: "approval", action_id: deps.ledger.getRun(runId).state.pending_action_id };
  return { next: "observe" };
}

/** Where the ledger says the run goes on: the one place a node reads the run's state to pick an edge. */
function fromLedger(deps: RuntimeDeps, runId: string): U {
  const run = deps.ledger.getRun(runId);
  switch (run.status) {
    case "running":
      // a recorded call with no answer, or an approved write not yet carried out: the execution node finishes it
      return { next: danglingCall(deps, runId) ? "execute" : "decide" };
    case "awaiting_approval":
      return { next: "approval", action_id: run.state.pending_action_id };
    case "verifying":
      return { next: "verify" };
    default:
      return { next: END };
  }
}

/**
 * The run as a LangGraph state graph. Every node is one host step
 * (runtime/steps.ts); the graph only orders them and saves where it paused.
 *
 *   START -> enter -> execute | verify | approval
 *   decide -> propose | observe | verify | END
 *   propose -> approval | observe | END
 *   approval (interrupt only) -> execute
 *   execute -> observe | approval | END
 *   observe -> decide | execute | approval | verify | END
 *   verify -> END
 *
 * LangGraph replays a node holding interrupt() from its start on resume, so
 * the approval node does nothing but pause and read its resume value: the
 * proposal happened before it (propose) and the write happens after it
 * (execute, through finishPending, which never writes twice).
 */
export function buildGraph(lookup: DriveLookup, checkpointer: BaseCheckpointSaver) {
  const at = (config: LangGraphRunnableConfig) => {
    const runId = runIdOf(config);
    return { runId, ...lookup(runId) };
  };
  /** an async node: its host step is tracked for the drive (DriveContext.track) */
  const step =
    (fn: (s: S, c: ReturnType<typeof at>) => Promise<U>) =>
    (s: S, config: LangGraphRunnableConfig): Promise<U> => {
      const c = at(config);
      return c.track(fn(s, c));
    };
  return new StateGraph(RouteState)
    .addNode("enter", (s: S, config): U => {
      const { deps, runId } = at(config);
      if (s.entry === "verify") return { next: "verify" };
      const route = fromLedger(deps, runId);
      // whatever the checkpoint said, what the ledger left pending is carried out first (finishPending is safe when nothing is)
      return route.next === "decide" ? { next: "execute" } : route;
    })
    .addNode(
      "decide",
      step(async (_s, { deps, active }) => {
        const decision = await nextDecision(deps, active);
        if (!decision) return { next: END };
        if (decision.kind === "tool") return { next: "propose" };
        if (decision.kind === "final") return { next: "verify" };
        return { next: "observe" };
      }),
    )
    .addNode(
      "propose",
      step(async (_s, { deps, active, runId }) => {
        // the call the decision recorded: the ledger's, not a copy in the graph state
        const call = danglingCall(deps, runId);
        if (!call) return { next: "observe" };
        return after(deps, runId, await proposeCall(deps, active, call));
      }),
    )
    .addNode("approval", (s: S): U => {
      // ONLY the pause and its resume value: this node runs again from its start on resume
      const pause: ApprovalPause = { action_id: s.action_id ?? "" };
      const resumed = interrupt<ApprovalPause, ApprovalResume>(pause);
      return { next: "execute", decided: resumed.decision };
    })
    .addNode(
      "execute",
      step(async (_s, { deps, active, runId }) => after(deps, runId, await finishPending(deps, active))),
    )
    .addNode("observe", (_s: S, config): U => {
      // what the model sees next is in the ledger already (tool_observed, messages); only the edge is picked here
      const { deps, runId } = at(config);
      return fromLedger(deps, runId);
    })
    .addNode(
      "verify",
      step(async (_s, { deps, active, runId }) => {
        const last = deps.ledger.listMessages(runId).at(-1);
        const finalText = last?.role === "assistant" && last.decision.kind === "final" ? last.decision.text : undefined;
        await verifyAndFinish(deps, active, finalText);
        return { next: END };
      }),
    )
    .addEdge(START, "enter")
    .addConditionalEdges("enter", (s: S) => s.next, ["execute", "verify", "approval", END])
    .addConditionalEdges("decide", (s: S) => s.next, ["propose", "observe", "verify", END])
    .addConditionalEdges("propose", (s: S) => s.next, ["approval", "observe", END])
    .addEdge("approval", "execute")
    .addConditionalEdges("execute", (s: S) => s.next, ["observe", "approval", END])
    .addConditionalEdges("observe", (s: S) => s.next, ["decide", "execute", "approval", "verify", END])
    .addEdge("verify", END)
    .compile({ checkpointer });
}

export type RunGraph = ReturnType<typeof buildGraph>;
