// This file generates the sample clicks and impressions in testdata/, and
// checks that the committed files are what it generates:
//
//	go test ./pipelines/attribution -run TestTestdata -generate

package attribution_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/beamjoin/beamjoin/pipelines/internal/sampledata"
)

func TestTestdata(t *testing.T) {
	clicks, impressions := generateClicksImpressions()
	sampledata.Check(t, map[string][]byte{"clicks.jsonl": clicks, "impressions.jsonl": impressions})
}

type event struct {
	ad, campaign, user string
	ts                 int64
}

// generateClicksImpressions returns clicks.jsonl and impressions.jsonl.
func generateClicksImpressions() (clicks, impressions []byte) {
	rng := rand.New(rand.NewPCG(2024, 6))
	base := time.Date(2024, 6, 1, 18, 0, 0, 0, time.UTC).UnixMilli()
	const sec, min = int64(1000), int64(60000)
	campaigns := []string{"spring", "spring", "summer", "summer", "brand", "brand", "launch"}

	var imps, cls []event
	for i := 0; i < 160; i++ {
		a := rng.IntN(6)
		imps = append(imps, event{
			ad:       fmt.Sprintf("ad-%d", a+1),
			campaign: campaigns[a],
			user:     fmt.Sprintf("u-%02d", 1+rng.IntN(30)),
			ts:       base + rng.Int64N(180*min),
		})
	}
	sort.SliceStable(imps, func(i, j int) bool { return imps[i].ts < imps[j].ts })
	for _, i := range rng.Perm(len(imps))[:36] { // a click some seconds or minutes after an impression
		c := imps[i]
		c.ts += 3*sec + rng.Int64N(9*min)
		cls = append(cls, c)
	}
	edge := imps[40]
	edge.ts += 10 * min // exactly at the end of the lookback: credited
	cls = append(cls, edge)
	edge = imps[80] // at the impression's own millisecond: credited
	cls = append(cls, edge)
	cls = append(cls,
		event{ad: "ad-7", campaign: "launch", user: "u-03", ts: base + 61*min}, // never shown
		event{ad: "ad-7", campaign: "launch", user: "u-11", ts: base + 122*min},
		event{ad: "ad-2", campaign: "spring", user: "u-08", ts: base - 30*min}, // before any impression
		event{ad: "ad-5", campaign: "brand", user: "u-19", ts: base - 20*min},
	)
	sort.SliceStable(cls, func(i, j int) bool { return cls[i].ts < cls[j].ts })

	var ib bytes.Buffer
	for i, e := range imps {
		fmt.Fprintf(&ib, `{"impression_id":"i-%04d","ad":{"id":%q,"campaign":%q},"user":%q,"ts":%d}`+"\n",
			i+1, e.ad, e.campaign, e.user, e.ts)
	}
	var cb bytes.Buffer
	for i, e := range cls {
		if i == 20 {
			cb.WriteString(`{"click_id":"c-999","ad":"ad-3","user":"u-05","ts":"2024-06-01T19:00:00Z"}` + "\n")
		}
		fmt.Fprintf(&cb, `{"click_id":"c-%03d","ad":{"id":%q,"campaign":%q},"user":%q,"ts":%q}`+"\n",
			i+1, e.ad, e.campaign, e.user, time.UnixMilli(e.ts).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	}
	return cb.Bytes(), ib.Bytes()
}
