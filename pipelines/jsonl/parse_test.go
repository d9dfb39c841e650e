package jsonl_test

import (
	"testing"

	"github.com/beamjoin/beamjoin/pipelines/jsonl"
)

func TestFieldsParse(t *testing.T) {
	f := jsonl.Fields{Key: "k", Time: "t"}
	for _, tc := range []struct {
		name, line string
		key        string
		ts         int64
		err        string
	}{
		{"string_key_is_its_json_text", `{"k":"a","t":5}`, `"a"`, 5, ""},
		{"escaped_string_is_the_same_key", `{"k":"\u0041","t":5}`, `"A"`, 5, ""},
		{"html_characters_are_not_escaped", `{"k":"<&>","t":5}`, `"<&>"`, 5, ""},
		{"integer_key", `{"k":42,"t":5}`, `42`, 5, ""},
		{"float_integer_key_is_the_integer", `{"k":42.0,"t":5}`, `42`, 5, ""},
		{"exponent_key_is_the_integer", `{"k":4.2e1,"t":5}`, `42`, 5, ""},
		{"big_integer_key_is_exact", `{"k":123456789012345678901234567890,"t":5}`, `123456789012345678901234567890`, 5, ""},
		{"fraction_key", `{"k":0.50,"t":5}`, `0.5`, 5, ""},
		{"negative_key", `{"k":-3,"t":5}`, `-3`, 5, ""},
		{"rfc3339_time", `{"k":"a","t":"2024-05-01T09:00:00Z"}`, `"a"`, 1714554000000, ""},
		{"rfc3339_time_with_offset", `{"k":"a","t":"2024-05-01T11:00:00+02:00"}`, `"a"`, 1714554000000, ""},
		{"rfc3339_sub_millisecond_dropped", `{"k":"a","t":"2024-05-01T09:00:00.0019Z"}`, `"a"`, 1714554000001, ""},
		{"negative_epoch_millis", `{"k":"a","t":-1000}`, `"a"`, -1000, ""},
		{"float_integer_millis", `{"k":"a","t":1.5e3}`, `"a"`, 1500, ""},
		{"nested_paths", `{"k":"a","t":1}`, `"a"`, 1, ""},
		{"bad_json", `{"k":"a",`, "", 0, "bad JSON: unexpected end of JSON input"},
		{"not_an_object", `"a"`, "", 0, "not a JSON object"},
		{"null_line", `null`, "", 0, "not a JSON object"},
		{"missing_key", `{"t":1}`, "", 0, `field "k": missing`},
		{"null_key", `{"k":null,"t":1}`, "", 0, `field "k": is null, want a string or a number`},
		{"object_key", `{"k":{},"t":1}`, "", 0, `field "k": is an object, want a string or a number`},
		{"empty_string_key", `{"k":"","t":1}`, "", 0, `field "k": is an empty string, want a non-empty string or a number`},
		{"missing_time", `{"k":"a"}`, "", 0, `field "t": missing`},
		{"fractional_millis", `{"k":"a","t":1.5}`, "", 0, `field "t": 1.5 is not a whole number of epoch milliseconds`},
		{"numeric_string_time", `{"k":"a","t":"1000"}`, "", 0, `field "t": "1000" is not an RFC 3339 time (want e.g. "2024-05-01T12:00:00Z" or epoch milliseconds)`},
		{"boolean_time", `{"k":"a","t":true}`, "", 0, `field "t": is a boolean, want epoch milliseconds or an RFC 3339 string`},
		{"time_out_of_range", `{"k":"a","t":9223372036854775807}`, "", 0, `field "t": 9223372036854775807 ms is outside the range of event time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, ts, err := f.Parse([]byte(tc.line))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Parse(%s) error = %v, want %q", tc.line, err, tc.err)
				}
				return
			}
			if err != nil || key != tc.key || ts != tc.ts {
				t.Fatalf("Parse(%s) = %s, %d, %v; want %s, %d", tc.line, key, ts, err, tc.key, tc.ts)
			}
		})
	}
}

func TestFieldsDottedPaths(t *testing.T) {
	f := jsonl.Fields{Key: "user.id", Time: "meta.at.ms"}
	key, ts, err := f.Parse([]byte(`{"user":{"id":"u"},"meta":{"at":{"ms":7}}}`))
	if err != nil || key != `"u"` || ts != 7 {
		t.Fatalf("Parse = %s, %d, %v", key, ts, err)
	}
	_, _, err = f.Parse([]byte(`{"user":{"id":"u"},"meta":{"at":3}}`))
	if want := `field "meta.at.ms": "meta.at" is not an object`; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestFieldsValidate(t *testing.T) {
	for _, tc := range []struct {
		f   jsonl.Fields
		err string
	}{
		{jsonl.Fields{Key: "a.b", Time: "t"}, ""},
		{jsonl.Fields{Time: "t"}, "beamjoin: the key field path is empty"},
		{jsonl.Fields{Key: "a..b", Time: "t"}, `beamjoin: the key field path "a..b" has an empty step`},
		{jsonl.Fields{Key: "k", Time: ".t"}, `beamjoin: the time field path ".t" has an empty step`},
	} {
		err := tc.f.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%+v.Validate() = %v, want %q", tc.f, err, tc.err)
		}
	}
}
