package goldenstate

import "testing"

// TestParseRefuses: a chunk must be hex and follow a record's line, and a
// record's line names its kind and its name; the error says where.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"chunk_before_record", "# header\n0102\n", `goldenstate: f.hex:2: not a chunk in hex after a record's line: "0102"`},
		{"chunk_not_hex", "bag b\n01zz\n", `goldenstate: f.hex:2: not a chunk in hex after a record's line: "01zz"`},
		{"record_without_name", "bag \n", `goldenstate: f.hex:1: a record's line is KIND NAME, not "bag "`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("f.hex", []byte(tc.text)); err == nil || err.Error() != tc.want {
				t.Errorf("Parse() error = %v, want %q", err, tc.want)
			}
		})
	}
}
