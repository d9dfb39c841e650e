package coders

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/exec"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
)

// Element encodes and decodes single values with a Beam coder. Its exported
// field is the coder in Beam's portable form, so an Element can be a field
// of a DoFn and be rebuilt on a worker; call Setup there before use.
type Element struct {
	// Coder is the value coder, as encoded by Beam's graphx.EncodeCoder.
	Coder string

	enc exec.ElementEncoder
	dec exec.ElementDecoder
	buf bytes.Buffer
	// fv and r serve every Encode and Decode, which would otherwise
	// allocate them for each value.
	fv exec.FullValue
	r  bytes.Reader
}

// KVValue returns an Element for the values of col, a PCollection of KV
// pairs, using the coder the PCollection already has.
func KVValue(col beam.PCollection) (Element, error) {
	return kvComponent(col, 1)
}

// KVKey returns an Element for the keys of col, a PCollection of KV pairs.
func KVKey(col beam.PCollection) (Element, error) {
	return kvComponent(col, 0)
}

func kvComponent(col beam.PCollection, i int) (Element, error) {
	c, err := unwrap(col.Coder())
	if err != nil {
		return Element{}, err
	}
	if c.Kind != coder.KV || len(c.Components) != 2 {
		return Element{}, fmt.Errorf("beamjoin: coders: %v is not a KV coder", c)
	}
	s, err := graphx.EncodeCoder(c.Components[i])
	if err != nil {
		return Element{}, fmt.Errorf("beamjoin: coders: encoding %v: %w", c.Components[i], err)
	}
	e := Element{Coder: s}
	return e, e.Setup()
}

// unwrap reaches the SDK's coder inside a beam.Coder. beam.Coder exports no
// accessor, but its portable JSON form round-trips through graphx.
func unwrap(c beam.Coder) (*coder.Coder, error) {
	js, err := json.Marshal(beam.EncodedCoder{Coder: c})
	if err != nil {
		return nil, fmt.Errorf("beamjoin: coders: encoding %v: %w", c, err)
	}
	var s string
	if err := json.Unmarshal(js, &s); err != nil {
		return nil, err
	}
	return graphx.DecodeCoder(s)
}

// Setup rebuilds the encoder and decoder from Coder. DoFns call it from
// their own Setup.
func (e *Element) Setup() error {
	c, err := graphx.DecodeCoder(e.Coder)
	if err != nil {
		return fmt.Errorf("beamjoin: coders: decoding value coder: %w", err)
	}
	e.enc = exec.MakeElementEncoder(c)
	e.dec = exec.MakeElementDecoder(c)
	return nil
}

// Encode returns v in the coder's encoding. The result is a new slice.
func (e *Element) Encode(v any) ([]byte, error) {
	if err := e.encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// AppendEncode appends v in the coder's encoding to dst and returns the
// extended slice.
func (e *Element) AppendEncode(dst []byte, v any) ([]byte, error) {
	if err := e.encode(v); err != nil {
		return dst, err
	}
	return append(dst, e.buf.Bytes()...), nil
}

// encode encodes v into e.buf.
func (e *Element) encode(v any) error {
	e.buf.Reset()
	e.fv = exec.FullValue{Elm: v}
	err := e.enc.Encode(&e.fv, &e.buf)
	e.fv = exec.FullValue{}
	if err != nil {
		return fmt.Errorf("beamjoin: coders: encoding %T: %w", v, err)
	}
	return nil
}

// Decode returns the value encoded in b.
func (e *Element) Decode(b []byte) (any, error) {
	e.r.Reset(b)
	e.fv = exec.FullValue{}
	if err := e.dec.DecodeTo(&e.r, &e.fv); err != nil {
		return nil, fmt.Errorf("beamjoin: coders: decoding %d bytes: %w", len(b), err)
	}
	v := e.fv.Elm
	e.fv = exec.FullValue{}
	return v, nil
}
