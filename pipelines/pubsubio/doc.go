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
// publish time; NAME is set by the Name option and defaults to the
// subscription's ID).
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
// late for the transforms downstream. When the subscription has had no
// message for IdleAfter, the watermark moves on by itself: event time is
// taken to pass as fast as the clock from the largest time read, so
// event-time timers and windows downstream fire on a quiet stream too.
// That rule, rather than "now less the lag", follows the stream's own
// clock: it is the same for a live stream, whose event times are close to
// now, and it does not make every message of a replay of old data late
// after its first pause. Before its first message a subscription's
// watermark does not move.
//
// # Acknowledgement
//
// A message is acknowledged only after the bundle that emitted it is
// committed, and a message that goes to the dead letters is acknowledged
// the same way: nothing is redelivered forever. Read checkpoints itself
// (ResumeProcessingIn) after every bundle of up to 5000 messages or half a
// second, so the runner commits its outputs and learns its watermark; the
// runner hands the read's residual to the next bundle only once the bundle
// that made it is committed, and that next bundle acknowledges its
// predecessor's messages. Until then a lease extends their ack deadlines
// (from 5 s after the pull, which is less than the shortest deadline a
// subscription can have). A bundle that fails is never committed: when the
// worker goes away (Prism fails the job) its messages are handed back at
// once; when the worker lives on, after five minutes. Delivery is at least
// once: a message is emitted again when its bundle failed, or when the
// pipeline stopped after the bundle was committed but before the next one
// acknowledged it.
//
// Beam's bundle finalization is not used: in the Go SDK v2.77 a DoFn
// instance's finalization callbacks run for its first bundle only (the
// plan gets a new finalizer while its DoFns keep the old one, and nothing
// in the project can reach the new one), and Prism logs an error for each
// later bundle. TestSDKFinalizesFirstBundleOfEachDoFnInstanceOnly
// reproduces it, and fails once the SDK is fixed. Acknowledging when the residual
// runs is right where a bundle's outputs and residual are committed
// together before the residual runs, as on Prism and Dataflow. On Flink
// (not tested here), where a checkpoint commits, the acknowledgement may
// come before the checkpoint, and a job restored from an older checkpoint
// would miss those messages.
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
