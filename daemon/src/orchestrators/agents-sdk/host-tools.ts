import type { Backend } from "../../contracts/sandbox.js";
import { finishPending, proposeCall } from "../../runtime/steps.js";
import { stopIfDue } from "../../runtime/stop.js";
import { toolDescriptions } from "../../tools/descriptions.js";
import { actionOf, answerOf, ledgerCallId, recordedCall } from "./ledger-facts.js";
import { halt, type DriveScope } from "./scope.js";
import { type FunctionTool, tool } from "./sdk.js";

/**
 * The SDK's function tools, one per tool the run is offered, GENERATED from
 * the zod schemas the host validates with (tools/descriptions.ts): the same
 * names, descriptions and JSON schemas a live model is told about. They are
 * non-strict and the SDK only parses the JSON, so a call with bad fields
 * reaches the host's validation and gets the same `invalid_fields`
 * observation as in the manual loop.
 *
 * The host takes every step; the SDK only decides when:
 *   needsApproval -> proposeCall: validate, policy, and either observe (deny;
 *                    or allowed and run in the sandbox) or persist the
 *                    prepared action and move the run to awaiting_approval.
 *                    Only that last case is an SDK interruption. Doing the
 *                    host's proposal here, before the SDK decides to pause,
 *                    is what lets the pause be the SDK's own human-in-the-loop.
 *   execute       -> finishPending: carries out what the person's decision
 *                    left (the approved write, once, through intent -> write
 *                    -> receipt; an approved command), then gives the SDK the
 *                    recorded observation. Replayed after a crash it writes
 *                    nothing twice.
 * The call itself is always read back from the ledger by its id; the SDK's
 * parsed arguments are not used.
 */
export function hostTools(scope: DriveScope, backend: Backend): FunctionTool[] {
  return toolDescriptions({ backend }).map(
    ({ function: d }) =>
      tool({
        name: d.name,
        description: d.description,
        parameters: d.parameters as never,
        strict: false,
        // a thrown HostHalt must unwind the Runner, not become a tool message
        errorFunction: null,
        needsApproval: (_ctx, _input, callId) => needsPerson(scope, ledgerCallId(callId ?? "")),
        execute: (_input, _ctx, details) => carryOut(scope, ledgerCallId(details?.toolCall?.callId ?? "")),
      }) as FunctionTool,
  );
}

async function needsPerson(scope: DriveScope, callId: string): Promise<boolean> {
  const { deps, active } = scope;
  await haltIfAborted(scope);
  const call = recordedCall(deps, active.runId, callId);
  // proposed before (the SDK asks again on a resumed state): the ledger's answer stands
  if (answerOf(deps, active.runId, callId)) return false;
  const action = actionOf(deps, active.runId, callId);
  if (action) return action.status === "pending";
  const outcome = await proposeCall(deps, active, call);
  if (outcome === "stopped") halt(scope, outcome);
  return outcome === "paused";
}

async function carryOut(scope: DriveScope, callId: string): Promise<string> {
  const { deps, active } = scope;
  await haltIfAborted(scope);
  const outcome = await finishPending(deps, active);
  if (outcome !== "continue") halt(scope, outcome);
  // what the model was told, as the ledger holds it (the SDK's own history is never shown to our model)
  return JSON.stringify(answerOf(deps, active.runId, callId));
}

/** A cancel or shutdown between the SDK's steps ends the drive through the shared stop, before anything else runs. */
async function haltIfAborted(scope: DriveScope): Promise<void> {
  if (!scope.active.signal.aborted) return;
  await stopIfDue(scope.deps, scope.active, {});
  halt(scope, "stopped");
}
