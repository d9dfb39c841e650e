package jsonl

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, text string, max int) []line {
	t.Helper()
	lr := newLineReader(strings.NewReader(text), max, 1, 0)
	var ls []line
	for {
		l, err := lr.next()
		if err == io.EOF {
			return ls
		}
		if err != nil {
			t.Fatal(err)
		}
		l.Text = append([]byte(nil), l.Text...)
		ls = append(ls, l)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name, text string
		max        int
		want       []line
	}{
		{"empty_file_has_no_lines", "", 10, nil},
		{"last_line_without_newline", "ab\ncd", 10, []line{
			{Number: 1, Next: 3, Text: []byte("ab"), Len: 2},
			{Number: 2, Next: 5, Text: []byte("cd"), Len: 2}}},
		{"crlf", "ab\r\ncd\r\n", 10, []line{
			{Number: 1, Next: 4, Text: []byte("ab"), Len: 2},
			{Number: 2, Next: 8, Text: []byte("cd"), Len: 2}}},
		{"blank_line", "\nab\n", 10, []line{
			{Number: 1, Next: 1, Text: nil, Len: 0},
			{Number: 2, Next: 4, Text: []byte("ab"), Len: 2}}},
		{"line_at_the_limit", "abcd\n", 4, []line{{Number: 1, Next: 5, Text: []byte("abcd"), Len: 4}}},
		{"line_over_the_limit_is_skipped_whole", "abcde\nok\n", 4, []line{
			{Number: 1, Next: 6, Text: []byte("abcde"), Len: 5, TooLong: true},
			{Number: 2, Next: 9, Text: []byte("ok"), Len: 2}}},
		{"long_line_keeps_its_beginning", long + "\nok", 10, []line{
			{Number: 1, Next: 101, Text: []byte(long[:12]), Len: 100, TooLong: true},
			{Number: 2, Next: 103, Text: []byte("ok"), Len: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readAll(t, tc.text, tc.max)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// A line longer than the reader's buffer is read across several chunks,
// and one far over the limit is not held in memory.
func TestLineReaderHugeLine(t *testing.T) {
	huge := strings.Repeat("y", 3<<20)
	ls := readAll(t, "a\n"+huge+"\nb\n", DefaultMaxLineBytes)
	if len(ls) != 3 || !ls[1].TooLong || ls[1].Len != 3<<20 || len(ls[1].Text) != rawKeep || string(ls[2].Text) != "b" || ls[2].Number != 3 {
		t.Fatalf("got %d lines; line 2 TooLong=%v Len=%d kept %d", len(ls), ls[1].TooLong, ls[1].Len, len(ls[1].Text))
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{`"line":10`, `"line":9`, `"line":09`, `a2b`, `a10b`, `a`, `b`}
	want := []string{`"line":9`, `"line":09`, `"line":10`, `a`, `a2b`, `a10b`, `b`}
	got := append([]string(nil), in...)
	for i := range got { // insertion sort: naturalLess alone decides
		for j := i; j > 0 && naturalLess(got[j], got[j-1]); j-- {
			got[j], got[j-1] = got[j-1], got[j]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
