package nexmark

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteJSONL writes events to person.jsonl, auction.jsonl and bid.jsonl in
// dir, one JSON object a line, each file in dateTime order.
func WriteJSONL(dir string, events []Event) error {
	names := []string{"person.jsonl", "auction.jsonl", "bid.jsonl"}
	var ws [3]*bufio.Writer
	var fs [3]*os.File
	for i, name := range names {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("nexmark: %w", err)
		}
		defer f.Close()
		fs[i], ws[i] = f, bufio.NewWriter(f)
	}
	for n, e := range events {
		var i int
		var v any
		switch {
		case e.Person != nil:
			i, v = 0, e.Person
		case e.Auction != nil:
			i, v = 1, e.Auction
		case e.Bid != nil:
			i, v = 2, e.Bid
		default:
			return fmt.Errorf("nexmark: event %d has no kind", n)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("nexmark: event %d: %w", n, err)
		}
		ws[i].Write(b)
		ws[i].WriteByte('\n')
	}
	for i := range ws {
		if err := ws[i].Flush(); err != nil {
			return fmt.Errorf("nexmark: writing %s: %w", names[i], err)
		}
		if err := fs[i].Close(); err != nil {
			return fmt.Errorf("nexmark: closing %s: %w", names[i], err)
		}
	}
	return nil
}
