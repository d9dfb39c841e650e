// This file holds the plain-Go rules that turn one JSON line into a key, an
// event time and the record carried through a join.

package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
)

// Record is one good input line, carried through a join unchanged.
type Record struct {
	// File is the file the line came from, as its pattern matched it.
	File string
	// Line is the 1-based line number in File.
	Line int64
	// Raw is the line's JSON object, without surrounding white space.
	Raw []byte
}

// Fields names where a line's key and event time are. Each is a dotted path
// into the line's object: "user.id" is the field "id" of the object in the
// field "user". A dot always separates path steps; field names that contain
// a dot cannot be addressed.
type Fields struct {
	Key  string
	Time string
}

// Validate reports an empty path or an empty step in one.
func (f Fields) Validate() error {
	for _, p := range []struct{ what, path string }{{"key", f.Key}, {"time", f.Time}} {
		if reason := checkPath(p.what, p.path); reason != "" {
			return errors.New("beamjoin: " + reason)
		}
	}
	return nil
}

// checkPath says what is wrong with the what field's path, or "".
func checkPath(what, path string) string {
	if path == "" {
		return fmt.Sprintf("the %s field path is empty", what)
	}
	for _, step := range strings.Split(path, ".") {
		if step == "" {
			return fmt.Sprintf("the %s field path %q has an empty step", what, path)
		}
	}
	return ""
}

// Parse reads a line's key and event time.
//
// The key is the canonical JSON text of the key field, so that keys compare
// as JSON values: a string key is its JSON string ("A" and "\u0041" are the
// same key); a number key is its value written as the shortest integer or
// float64 text (1, 1.0 and 1e0 are the same key, 1); a string never equals a
// number ("1" and 1 are different keys). An empty string, null, a boolean,
// an array or an object is not a key.
//
// The event time is either an integer number of milliseconds since the Unix
// epoch, or an RFC 3339 string ("2024-05-01T12:00:00Z", fractional seconds
// allowed; digits below the millisecond are dropped).
//
// Errors name the field and say what is wrong, without a file or line: the
// caller adds those.
func (f Fields) Parse(line []byte) (key string, ts int64, err error) {
	obj, err := object(line)
	if err != nil {
		return "", 0, err
	}
	if key, err = f.key(obj); err != nil {
		return "", 0, err
	}
	if ts, err = f.time(obj); err != nil {
		return "", 0, err
	}
	return key, ts, nil
}

// ParseKey reads a line's key only, as Parse does: for a record whose event
// time comes from elsewhere, such as a Pub/Sub message's attribute.
func (f Fields) ParseKey(line []byte) (key string, err error) {
	obj, err := object(line)
	if err != nil {
		return "", err
	}
	return f.key(obj)
}

// ParseTime reads a line's event time only, as Parse does, in milliseconds
// since the Unix epoch.
func (f Fields) ParseTime(line []byte) (ts int64, err error) {
	obj, err := object(line)
	if err != nil {
		return 0, err
	}
	return f.time(obj)
}

// object decodes a line that must be a JSON object.
func object(line []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		if t := firstByte(line); t != '{' && json.Valid(line) {
			return nil, fmt.Errorf("not a JSON object")
		}
		return nil, fmt.Errorf("bad JSON: %v", err)
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return obj, nil
}

func (f Fields) key(obj map[string]json.RawMessage) (string, error) {
	kv, err := lookup(obj, f.Key)
	if err != nil {
		return "", err
	}
	key, err := canonicalKey(kv)
	if err != nil {
		return "", fmt.Errorf("field %q: %v", f.Key, err)
	}
	return key, nil
}

func (f Fields) time(obj map[string]json.RawMessage) (int64, error) {
	tv, err := lookup(obj, f.Time)
	if err != nil {
		return 0, err
	}
	ts, err := eventTime(tv)
	if err != nil {
		return 0, fmt.Errorf("field %q: %v", f.Time, err)
	}
	return ts, nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// lookup follows a dotted path from obj.
func lookup(obj map[string]json.RawMessage, path string) (json.RawMessage, error) {
	steps := strings.Split(path, ".")
	for i, step := range steps {
		v, ok := obj[step]
		if !ok {
			return nil, fmt.Errorf("field %q: missing", path)
		}
		if i == len(steps)-1 {
			return v, nil
		}
		obj = nil
		if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("field %q: %q is not an object", path, strings.Join(steps[:i+1], "."))
		}
	}
	panic("unreachable")
}

// canonicalKey returns the canonical JSON text of a key value.
func canonicalKey(v json.RawMessage) (string, error) {
	switch c := firstByte(v); {
	case c == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("is an empty string, want a non-empty string or a number")
		}
		return marshalString(s), nil
	case c == '-' || ('0' <= c && c <= '9'):
		return canonicalNumber(string(bytes.TrimSpace(v)))
	default:
		return "", fmt.Errorf("is %s, want a string or a number", kindOf(c))
	}
}

func canonicalNumber(text string) (string, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return strconv.FormatInt(n, 10), nil
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return "", fmt.Errorf("%s is not a number", text)
	}
	if r.IsInt() {
		return r.Num().String(), nil
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func kindOf(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "not a JSON value"
}

// marshalString writes s as a JSON string without HTML escaping.
func marshalString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// eventTime reads epoch milliseconds or an RFC 3339 string.
func eventTime(v json.RawMessage) (int64, error) {
	var ms int64
	switch c := firstByte(v); {
	case c == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Errorf("%q is not an RFC 3339 time (want e.g. \"2024-05-01T12:00:00Z\" or epoch milliseconds)", s)
		}
		ms = t.UnixMilli()
	case c == '-' || ('0' <= c && c <= '9'):
		text := string(bytes.TrimSpace(v))
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(text, 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
				return 0, fmt.Errorf("%s is not a whole number of epoch milliseconds", text)
			}
			n = int64(f)
		}
		ms = n
	default:
		return 0, fmt.Errorf("is %s, want epoch milliseconds or an RFC 3339 string", kindOf(c))
	}
	if ms < int64(mtime.MinTimestamp) || ms > int64(mtime.MaxTimestamp) {
		return 0, fmt.Errorf("%d ms is outside the range of event time", ms)
	}
	return ms, nil
}
