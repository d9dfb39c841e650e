// This file holds the Pub/Sub clients a worker shares between its DoFns.

package pubsubio

import (
	"context"
	"fmt"
	"os"
	"sync"

	"cloud.google.com/go/pubsub/v2"
)

// emulatorHost is the variable the client library reads to talk to an
// emulator or a fake instead of the service.
const emulatorHost = "PUBSUB_EMULATOR_HOST"

var clients struct {
	mu sync.Mutex
	m  map[string]*pubsub.Client
}

// clientFor returns the worker's client for project. Clients are made once
// per project and emulator address and kept for the life of the process:
// the Go harness never tears its DoFns down, and a lease acknowledges its
// messages after the DoFn that pulled them has returned.
//
// The client is made with no option, so the library's own rules choose the
// service: PUBSUB_EMULATOR_HOST, when set, points it at an emulator such as
// `beamjoin pubsub-fake`, without credentials. Its context is the
// background: a client's credentials keep the context they were made with
// to refresh tokens, and no bundle's context outlives the process.
func clientFor(project string) (*pubsub.Client, error) {
	key := project + "\x00" + os.Getenv(emulatorHost)
	clients.mu.Lock()
	defer clients.mu.Unlock()
	if c, ok := clients.m[key]; ok {
		return c, nil
	}
	c, err := pubsub.NewClient(context.Background(), project)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: pubsubio: a client for project %q: %w", project, err)
	}
	if clients.m == nil {
		clients.m = map[string]*pubsub.Client{}
	}
	clients.m[key] = c
	return c, nil
}
