import { type Job, type JobJsonRaw, Worker } from "bullmq";

/**
 * A job whose stored data (or options) is not JSON. BullMQ parses the job
 * hash only after its script has moved the job to `active`; the parse threw
 * inside the fetch, so the worker never held the job, could neither run nor
 * fail it, and the stall check put it back every few seconds, forever. Such a
 * job is now read with this in place of its data, and failed terminally with
 * the reason (worker.ts).
 */
export class UnreadableJobData {
  constructor(readonly reason: string) {}
}

/** A BullMQ Worker whose fetch never throws on a job's bytes: what does not parse becomes UnreadableJobData. */
export class ReadingWorker extends Worker {
  protected override createJob(raw: JobJsonRaw, jobId: string): Job {
    try {
      return super.createJob(raw, jobId);
    } catch (err) {
      const reason = `the job's stored ${parses(raw.data) ? "fields are" : "data is"} not JSON (${(err as Error)?.message ?? String(err)})`;
      // the other fields BullMQ parses fall back to its defaults when they do not parse either: the job is only ever failed
      const job = super.createJob(
        { ...raw, data: "null", opts: parses(raw.opts) ? raw.opts : "{}", progress: parses(raw.progress) ? raw.progress : "0" },
        jobId,
      );
      job.data = new UnreadableJobData(reason);
      return job;
    }
  }
}

function parses(text: string | undefined): boolean {
  try {
    JSON.parse(text || "{}");
    return true;
  } catch {
    return false;
  }
}
