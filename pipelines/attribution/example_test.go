package attribution_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beamjoin/beamjoin/pipelines/attribution"
	"github.com/beamjoin/beamjoin/pipelines/jsonjoin"
)

// Attribute the sample clicks to impressions, and list the clicks that no
// impression explains.
func Example() {
	dir, _ := os.MkdirTemp("", "attribution")
	defer os.RemoveAll(dir)
	c := attribution.Config("../../testdata/clicks.jsonl", "../../testdata/impressions.jsonl")
	c.Out = filepath.Join(dir, "attributed.jsonl")
	if _, err := jsonjoin.Run(context.Background(), c, jsonjoin.DefaultRunner); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(c.Out)
	fmt.Println("click-impression pairs:", strings.Count(string(out), `{"kind":"pair"`))
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, `{"kind":"unmatched"`) {
			i := strings.Index(l, `"click_id":`)
			fmt.Println("unattributed:", l[i+11:i+18])
		}
	}
	// Output:
	// click-impression pairs: 102
	// unattributed: "c-001"
	// unattributed: "c-002"
	// unattributed: "c-009"
	// unattributed: "c-028"
}
