// This file holds the read stage: each input read as the plan's sources
// say, from files (package jsonl) or from a Pub/Sub subscription (package
// pubsubio), into keyed, timestamped records and dead letters.

package jsonjoin

import (
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/beamjoin/beamjoin/pipelines/jsonl"
	"github.com/beamjoin/beamjoin/pipelines/pubsubio"
)

func init() {
	register.DoFn3x0[pubsubio.Message, func(string, jsonl.Record), func(jsonl.DeadLetter)](&messageFn{})
	register.Function1x1(pubsubDeadLetter)
	register.Emitter2[string, jsonl.Record]()
	register.Emitter1[jsonl.DeadLetter]()
}

// input is one side of a join as read: its records, keyed and
// timestamped, and the lines or messages that are not records.
type input struct {
	Records, DeadLetters beam.PCollection
	// ReaderLate, valid only when the reader judges lateness (a replay
	// whose sourcePlan says so), holds the records the reader sent to the
	// late output instead of Records.
	ReaderLate beam.PCollection
}

// read is the read stage: it reads the inputs srcs, in their order.
// Files are read together, through jsonl (a replay is one stream of all
// inputs, with one watermark: see jsonl.ReadAll); subscriptions are
// streams of their own, read through pubsubio.
func read(s beam.Scope, srcs []sourcePlan) ([]input, error) {
	ins := make([]input, len(srcs))
	var files []jsonl.Source
	var at []int
	judgesLate := false
	for i, src := range srcs {
		if src.sub == "" {
			files = append(files, src.file)
			at = append(at, i)
			judgesLate = judgesLate || src.file.JudgeLate
			continue
		}
		var err error
		if ins[i].Records, ins[i].DeadLetters, err = readSubscription(s.Scope(src.name), src); err != nil {
			return nil, err
		}
	}
	if len(files) == 0 {
		return ins, nil
	}
	var records, late, bad []beam.PCollection
	var err error
	if judgesLate {
		records, late, bad, err = jsonl.TryReadAllWithLate(s, files...)
	} else {
		records, bad, err = jsonl.TryReadAll(s, files...)
	}
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		ins[i].Records, ins[i].DeadLetters = records[j], bad[j]
		if late != nil {
			ins[i].ReaderLate = late[j]
		}
	}
	return ins, nil
}

// readSubscription reads a subscription as records keyed as jsonl.Read
// keys lines, and dead letters: messages that are not JSON objects, or
// whose key or event time is missing or bad.
func readSubscription(s beam.Scope, src sourcePlan) (records, deadLetters beam.PCollection, err error) {
	msgs, dead, err := pubsubio.TryRead(s, src.sub, src.subOptions...)
	if err != nil {
		return records, deadLetters, err
	}
	records, badKeys := beam.ParDo2(s, &messageFn{Subscription: src.sub, Key: src.key}, msgs)
	return records, beam.Flatten(s, badKeys, beam.ParDo(s, pubsubDeadLetter, dead)), nil
}

// messageFn keys a message by its key field; its event time is the
// element's, which pubsubio.Read gave it.
type messageFn struct {
	Subscription string
	Key          string
}

func (f *messageFn) ProcessElement(m pubsubio.Message, emit func(string, jsonl.Record), bad func(jsonl.DeadLetter)) {
	key, err := jsonl.Fields{Key: f.Key}.ParseKey(m.Data)
	if err != nil {
		bad(jsonl.DeadLetter{File: PubSub + f.Subscription, Line: messageLine(m.ID), Error: err.Error(), Raw: string(m.Data)})
		return
	}
	emit(key, jsonl.Record{File: PubSub + f.Subscription, Line: messageLine(m.ID), Raw: m.Data})
}

// pubsubDeadLetter is a message pubsubio.Read could not read, as the dead
// letter of a line: File is the subscription, Line the message ID.
func pubsubDeadLetter(d pubsubio.DeadLetter) jsonl.DeadLetter {
	return jsonl.DeadLetter{File: PubSub + d.Subscription, Line: messageLine(d.MessageID), Error: d.Error, Raw: d.Data}
}

// messageLine is where a message's record or dead letter says it is: its
// message ID, a decimal number on Pub/Sub and its fakes, and 0 for an ID
// that is not one.
func messageLine(id string) int64 {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
