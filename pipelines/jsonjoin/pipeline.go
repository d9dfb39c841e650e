// This file holds Build, the pipeline of a join: its stages in the order
// the data flows through them, each given its part of the plan (plan.go).

package jsonjoin

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	// Every runner the command can name with --runner, and the file
	// systems they read from.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
)

// Build adds the join that c describes to the pipeline: it reads the
// inputs, joins them, and writes the results, the late elements and the
// dead letters where c says, and the run's accounting to c.Accounting when
// it is set. It returns an error, and adds nothing that matters, when c is
// invalid or an input pattern matches no file.
func Build(s beam.Scope, c Config) error {
	p, err := newPlan(c)
	if err != nil {
		return err
	}
	return build(s, p)
}

// build adds the stages of p to the pipeline: read, join, write, account.
func build(s beam.Scope, p *plan) error {
	s = s.Scope("jsonjoin." + string(p.op))
	ins, err := read(s, p.sources)
	if err != nil {
		return err
	}
	var records []beam.PCollection
	for _, in := range ins {
		records = append(records, in.Records)
	}
	out, err := p.join.stage(s, p.join, records)
	if err != nil {
		return err
	}
	if err := write(s, p.sinks, out, ins); err != nil {
		return err
	}
	account(s, p.accounting, ins, out)
	return nil
}
