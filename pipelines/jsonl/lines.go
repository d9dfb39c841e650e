// This file holds the line reader: lines of bounded size, with their byte
// offsets, so that a replay can resume after any line.

package jsonl

import (
	"bufio"
	"bytes"
	"io"
)

// DefaultMaxLineBytes is the longest line read as a record: 1 MiB. A longer
// line goes to the dead letters, and the reader goes on after it.
const DefaultMaxLineBytes = 1 << 20

// rawKeep is how much of a line over the limit is kept in its dead letter.
const rawKeep = 4 << 10

// line is one line of a file.
type line struct {
	Number int64  // 1-based
	Next   int64  // byte offset just past the line and its newline
	Text   []byte // without the newline and a trailing '\r'; cut to rawKeep if TooLong
	Len    int64  // full length of the line in bytes, without its newline
	// TooLong says the line is longer than the reader's limit; Text holds
	// only its beginning.
	TooLong bool
}

// lineReader reads lines of at most max bytes, skipping over longer ones
// without holding them in memory.
type lineReader struct {
	r      *bufio.Reader
	max    int
	number int64
	offset int64
	buf    []byte
}

// newLineReader reads r, whose first line is number firstNumber and starts
// at byte offset offset.
func newLineReader(r io.Reader, max int, firstNumber, offset int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max, number: firstNumber - 1, offset: offset}
}

// next returns the next line, or io.EOF after the last. A last line without
// a newline is a line; an empty file has none.
func (lr *lineReader) next() (line, error) {
	lr.buf = lr.buf[:0]
	var n int64
	newline := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		n += int64(len(chunk))
		if len(lr.buf) < lr.max+2 { // room for "\r\n"; keep no more
			lr.buf = append(lr.buf, chunk[:min(len(chunk), lr.max+2-len(lr.buf))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && n == 0 {
			return line{}, io.EOF
		}
		if err != nil && err != io.EOF {
			return line{}, err
		}
		newline = err == nil
		break
	}
	lr.number++
	lr.offset += n
	length := n
	text := lr.buf
	if newline {
		length--
		if int64(len(text)) == n {
			text = text[:len(text)-1]
		}
	}
	if int64(len(text)) == length && bytes.HasSuffix(text, []byte("\r")) {
		text = text[:len(text)-1]
		length--
	}
	l := line{Number: lr.number, Next: lr.offset, Text: text, Len: length}
	if length > int64(lr.max) {
		l.TooLong = true
		l.Text = text[:min(len(text), rawKeep)]
	}
	return l, nil
}
