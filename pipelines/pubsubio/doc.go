// Package pubsubio reads and writes Google Cloud Pub/Sub in Beam pipelines
// on every runner, through the client library cloud.google.com/go/pubsub/v2.
// (The Beam Go SDK's own pubsubio runs only on Dataflow; Prism and Flink
// refuse it.) It is how beamjoin joins live streams.
//
// # Reading
//
// Read pulls a subscription as an unbounded stream of Messages, each
// timestamped with its event time, and DeadLetters for the messages that
// are not JSON objects. Every message is one or the other, and every one is
// counted (namespace "beamjoin": NAME_read for messages, NAME_invalid for
// dead letters, NAME_publish_time for messages timestamped with their
// publish time, NAME_skewed for event times beyond MaxSkew; NAME is set by
// the Name option and defaults to the subscription's ID).
//
// A message's event time is read from its attribute DefaultTimeAttribute,
// or the one named by TimeAttribute, as epoch milliseconds or an RFC 3339
// time; a message without it, or with a value that is neither, gets its
// publish time. With TimeField the event time is a field of the message's
// JSON object instead, and a message without a good one is a dead letter.
//
// # Watermark
//
// Read's watermark trails the largest event time read by WatermarkLag
// (bounded out-of-orderness): a message up to the lag older than the
// newest one read is on time; an older one is emitted all the same, and is
// late for the transforms downstream. It depends only on what committed
// bundles read: a client of Pub/Sub sees no message before it pulls it,
// so a pause in delivery, or in the reader's own bundles (a worker
// restart, a restore from a checkpoint), makes nothing late, and a quiet
// stream's event-time timers wait for its next message. Before its first
// message a subscription's watermark does not move. Messages that a failed
// bundle pulled and handed back hold it until a committed bundle reads
// them again.
//
// IdleAfter is the opt-in to move the watermark on once the reader has
// spent that long in pulls that found nothing, so that timers and windows
// fire on a quiet stream; it makes a message that comes after the quiet
// time with an earlier event time late (see IdleAfter). MaxSkew keeps one
// event time far ahead of the stream from moving the watermark for good.
// docs/pubsub.md states the rule whole.
//
// # Parallel reads
//
// Readers(n) reads the subscription with n pull loops, which a runner may
// spread over its workers; the service shares the messages among them, and
// each is emitted once. The readers of a worker share the largest event
// time their committed bundles read, so that one that gets no message does
// not hold the watermark back; readers in different workers cannot, so
// Readers(n > 1) needs IdleAfter, after which a reader that has read
// nothing follows the clock (see Readers).
//
// # State
//
// The runner keeps a reader's restriction and watermark estimator state
// across checkpoints, savepoints and updates, in formats that carry their
// version (StateVersion); every earlier format still decodes.
//
// # Acknowledgement
//
// A message is acknowledged only after the bundle that emitted it is
// committed on Prism and Dataflow, and a message that goes to the dead
// letters is acknowledged the same way: nothing is redelivered forever.
// Read checkpoints itself (ResumeProcessingIn) after every bundle of up to
// 5000 messages or half a second, so the runner commits its outputs and
// learns its watermark; the runner hands the read's residual to the next
// bundle only once the bundle that made it is committed, and that next
// bundle acknowledges its predecessor's messages. Until then a lease
// extends their ack deadlines (from 5 s after the pull, which is less than
// the shortest deadline a subscription can have). A bundle that fails is
// never committed: its messages are handed back at once when the worker
// goes away (Prism fails the job) or the runner retries the bundle in the
// same worker, and after five minutes otherwise. Delivery is at least
// once, and de-duplication (DeduplicateFor, IDAttribute) drops what comes
// again within a job: a message is emitted again when its bundle failed,
// or when its acknowledgement was lost after the commit.
//
// On Flink the residual may run before the checkpoint that holds the
// bundle's outputs completes, so a message may be acknowledged before its
// checkpoint, and a job restored from an earlier checkpoint misses it.
// Bundle finalization, which would acknowledge after the checkpoint, is
// not used: in the Go SDK v2.77 a DoFn instance's finalization callbacks
// run for its first bundle only (the plan gets a new finalizer while its
// DoFns keep the old one), and no DoFn can reach the plan's new one.
// TestSDKFinalizesFirstBundleOfEachDoFnInstanceOnly reproduces it, and
// fails once the SDK is fixed; docs/pubsub.md gives the guarantee per
// runner and the ways around the defect that were ruled out.
//
// # Writing
//
// Write publishes each element of a PCollection as one JSON message, with
// its event time in epoch milliseconds in the time attribute, so that Read
// reads it back with the same event time. Messages are batched as the
// client library does; a bundle ends only once each of its messages is
// published, and a failure fails the bundle, so nothing is lost silently.
//
// # Emulators and fakes
//
// The clients are made with no option, so the client library's own rules
// choose the service: when PUBSUB_EMULATOR_HOST is set, Read and Write
// talk to the emulator or fake at that address (such as the client
// library's pstest, which the package's tests and examples start in
// process), without credentials; otherwise to Pub/Sub, with the default
// credentials. The variable must be set where the workers run.
package pubsubio
