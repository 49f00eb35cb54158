package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jetStream is the NATS anchor: file-stored streams bench-N on subjects
// bench.N; the servers' sync_interval (bench.sh sets always) decides
// when a stored message is fsynced.
type jetStream struct{}

func (jetStream) create(ctx context.Context, urls []string, n, replicas int) error {
	nc, err := nats.Connect(urls[0])
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for i := range n {
		cfg := jetstream.StreamConfig{Name: fmt.Sprintf("bench-%d", i), Subjects: []string{fmt.Sprintf("bench.%d", i)},
			Replicas: replicas, Storage: jetstream.FileStorage}
		if err := retry(ctx, func() error { _, err := js.CreateStream(ctx, cfg); return err }); err != nil {
			return fmt.Errorf("create %s: %w", cfg.Name, err)
		}
	}
	return nil
}

func (jetStream) open(_ context.Context, url string) (publisher, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return natsPublisher{nc, js}, nil
}

type natsPublisher struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func (p natsPublisher) send(ctx context.Context, s int, payload []byte) error {
	_, err := p.js.Publish(ctx, fmt.Sprintf("bench.%d", s), payload)
	return err
}

func (p natsPublisher) close() { p.nc.Close() }
