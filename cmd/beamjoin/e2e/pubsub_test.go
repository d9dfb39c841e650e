package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/google/go-cmp/cmp"
)

// The streaming reconciliation of docs/cli.md's Pub/Sub section, with the
// same flags: orders and payments published to the fake, joined from their
// subscriptions, the pairs published to a topic.
var (
	fakeTopics = []string{"--topic", "projects/demo/topics/orders", "--topic", "projects/demo/topics/payments", "--topic", "projects/demo/topics/results"}
	streamJoin = []string{"interval",
		"--left", "pubsub:projects/demo/subscriptions/orders", "--right", "pubsub:projects/demo/subscriptions/payments",
		"--key", "order_id", "--time", "ts", "--lower", "0", "--upper", "15m", "--watermark-lag", "6h",
		"--out", "pubsub:projects/demo/topics/results"}
)

// TestE2EPubSub starts `beamjoin pubsub-fake`, publishes both sample inputs
// with `beamjoin publish`, runs `beamjoin interval` from the two
// subscriptions to a topic, reads the results back from the topic until it
// has as many as the same join of the files writes, stops the join with an
// interrupt, reads what else the topic got, and compares the records with
// the file run's, exactly. The watermark lag is longer than the samples'
// five hours, so that no payment is late however the two streams
// interleave: the pairs are then those of the files.
func TestE2EPubSub(t *testing.T) {
	bin := beamjoinBinary(t)
	root, _ := filepath.Abs("../../..")
	want := lines(mustRun(t, root, "interval", "--left", "testdata/orders.jsonl", "--right", "testdata/payments.jsonl",
		"--key", "order_id", "--time", "ts", "--lower", "0", "--upper", "15m", "--quiet").stdout)
	if len(want) == 0 {
		t.Fatal("the file run wrote no pairs")
	}

	addr := startFake(t, bin)
	t.Setenv("PUBSUB_EMULATOR_HOST", addr)
	// The payments are paced by event time: their five hours in about a
	// fifth of a second.
	for _, f := range []struct {
		topic, file string
		pace        []string
	}{{"orders", "orders.jsonl", nil}, {"payments", "payments.jsonl", []string{"--speed", "100000"}}} {
		args := append([]string{"publish", "--topic", "projects/demo/topics/" + f.topic, "--time", "ts"}, f.pace...)
		r := mustRun(t, root, append(args, "testdata/"+f.file)...)
		if !strings.Contains(r.stderr, "published") {
			t.Errorf("publish %s: stderr %q", f.file, r.stderr)
		}
	}

	join := exec.Command(bin, append(streamJoin, "--quiet")...)
	join.Env = append(os.Environ(), "PUBSUB_EMULATOR_HOST="+addr)
	var stderr strings.Builder
	join.Stderr = &stderr
	join.WaitDelay = 5 * time.Second
	if err := join.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- join.Wait() }()
	defer func() {
		if join.ProcessState == nil {
			join.Process.Kill()
			<-exited
		}
	}()

	ctx := context.Background()
	client, err := pubsub.NewClient(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	const results = "projects/demo/subscriptions/results"
	var got []string
	for len(got) < len(want) {
		select {
		case err := <-exited:
			t.Fatalf("the join ended before writing every pair (%d of %d): %v\n%s", len(got), len(want), err, stderr.String())
		default:
		}
		got = append(got, pull(ctx, t, client, results, false)...)
	}
	if err := join.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("the join, interrupted: %v\n%s", err, stderr.String())
	}
	// A summary line, as a file run ends with one, even under --quiet.
	said := regexp.MustCompile(`(?m)^beamjoin: stopped after \S+: left \d+ lines read \(event time \S+\), right \d+ lines read \(event time \S+\); \d+ records out\nbeamjoin: messages not yet acknowledged are delivered to the next run$`)
	if !said.MatchString(stderr.String()) {
		t.Errorf("the join's standard error does not say it stopped, and what it did:\n%s", stderr.String())
	}
	// What else it published before it stopped: a duplicate would be here.
	got = append(got, pull(ctx, t, client, results, true)...)
	if diff := cmp.Diff(want, lines(strings.Join(got, "\n"))); diff != "" {
		t.Errorf("pairs from the results topic differ from the file run's (-file +pubsub):\n%s", diff)
	}
}

// startFake starts `beamjoin pubsub-fake` on a free port with the demo's
// topics, waits until it serves them, and returns its address.
func startFake(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	fake := exec.Command(bin, append([]string{"pubsub-fake", "--port", fmt.Sprint(port)}, fakeTopics...)...)
	errs, err := fake.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fake.Process.Signal(syscall.SIGINT)
		fake.Wait()
	})
	sc := bufio.NewScanner(errs)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.Contains(sc.Text(), "serving on") {
			go func() {
				for sc.Scan() {
				}
			}()
			return fmt.Sprintf("localhost:%d", port)
		}
	}
	t.Fatalf("pubsub-fake ended without serving:\n%s", strings.Join(said, "\n"))
	return ""
}

// pull pulls a batch of messages from sub and acknowledges them. Unless
// drain, it waits for at least one; with drain, it pulls until a pull
// returns none.
func pull(ctx context.Context, t *testing.T, client *pubsub.Client, sub string, drain bool) []string {
	t.Helper()
	var data []string
	for {
		//lint:ignore SA1019 the fake honours ReturnImmediately, and a drain needs a pull that returns at once when nothing is left
		resp, err := client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 1000, ReturnImmediately: drain})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range resp.ReceivedMessages {
			data = append(data, string(m.Message.Data))
			ids = append(ids, m.AckId)
		}
		if len(ids) > 0 {
			if err := client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
				t.Fatal(err)
			}
		}
		if !drain || len(ids) == 0 {
			return data
		}
	}
}
