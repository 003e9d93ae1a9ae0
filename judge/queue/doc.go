// Package queue carries submissions from the records to the engine and
// verdicts back: one function judges a queued submission (Judging.Judge:
// read it from the records, run the engine, store the verdict or settle it
// as not judged, publish progress and the final event), and a Queue feeds
// it, in this process (Local, beside SQLite records) or through River on
// PostgreSQL (River, and Worker: what `judge worker` runs, and the
// server's own judging there).
//
// Either queue admits a bounded line of submissions (a cap in all, per
// learner and per client address), keeps each live submission's events
// for whoever follows it, and queues again at start what a previous run
// left unfinished. Nothing here speaks HTTP: the web server turns the
// events into its streams, and the commands serve the metrics.
package queue
