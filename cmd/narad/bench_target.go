package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/narad-io/narad/client"
)

// benchTarget is the topic a bench writes to.
type benchTarget struct {
	name       string
	scratch    bool // made by this bench, deleted when it ends
	partitions int
	child      string // --via-child: the scratch child attached to it (maybe made; deleted too)
}

// consumeFrom is the topic the consumers read: the child, if any.
func (t benchTarget) consumeFrom() string {
	if t.child != "" {
		return t.child
	}
	return t.name
}

// scratchRetention bounds what a scratch topic keeps should its deletion
// never happen (the CLI killed, the node unreachable at the end): the
// records age out within the hour anyway.
const scratchRetention = time.Hour

// scratchDropTimeout bounds the deletion at the end, which runs even after
// Ctrl-C (on a context of its own).
const scratchDropTimeout = 10 * time.Second

// target resolves the topic: the named one, which must exist, or a new
// scratch topic. On an error the target is still a scratch one when a
// create may have happened unanswered, so the caller deletes it.
func (b *bench) target(ctx context.Context, named string) (benchTarget, error) {
	if named != "" {
		t, err := b.c.GetTopic(ctx, named)
		if client.StatusOf(err) == http.StatusNotFound {
			return benchTarget{}, fmt.Errorf("topic %s not found (leave out TOPIC and the bench makes a scratch topic of its own): %w", named, err)
		}
		if err != nil {
			return benchTarget{}, err
		}
		if !b.f.nonempty {
			if err := refuseNonempty(t); err != nil {
				return benchTarget{}, err
			}
		}
		return benchTarget{name: named, partitions: t.Partitions}, nil
	}
	name, err := scratchName()
	if err != nil {
		return benchTarget{}, err
	}
	retention := scratchRetention.Milliseconds()
	created, err := b.c.CreateTopic(ctx, client.CreateTopicRequest{
		Name:              name,
		Partitions:        b.f.partitions,
		RetentionMs:       &retention,
		ReplicationFactor: b.f.rf, // the --via-child copy keeps one
		Ordering:          b.f.ordering,
	})
	if err != nil {
		// Without an answer (cut short, connection lost) the topic may
		// exist: the caller deletes it. With one it does not — and a
		// 409 names a topic that is not ours to delete.
		unknown := client.StatusOf(err) == 0
		return benchTarget{name: name, scratch: unknown}, fmt.Errorf("creating the scratch topic %s: %w", name, err)
	}
	t := benchTarget{name: name, scratch: true, partitions: created.Partitions}
	fmt.Fprintf(b.a.stderr, "bench: scratch topic %s (%d partitions), deleted when the bench ends\n", name, t.partitions)
	if b.f.viaChild {
		return b.scratchChild(ctx, t, retention)
	}
	return t, nil
}

// refuseNonempty refuses a named topic that holds records, or whose
// partitions' stats do not all say: the bench's records would sit among
// the user's, where the topic's consumers would get them and nothing
// could take them out again. (A topic the bench made itself is a scratch
// one, never named.)
func refuseNonempty(t client.TopicDetail) error {
	var held uint64
	unknown := t.Partitions - len(t.PartitionStats)
	for _, p := range t.PartitionStats {
		if p.Available != nil && !*p.Available {
			unknown++ // its owner did not answer: no figures
			continue
		}
		if p.NextOffset > p.OldestOffset {
			held += p.NextOffset - p.OldestOffset
		}
	}
	const way = "leave out TOPIC and the bench uses a scratch topic of its own, or pass --allow-nonempty"
	switch {
	case held > 0:
		return fmt.Errorf("topic %s holds %s: the bench would add its own among them, and the topic's consumers would get them (%s)",
			t.Name, plural(int(held), "record"), way)
	case unknown > 0:
		return fmt.Errorf("topic %s: whether it holds records is unknown, %s of %d gave no stats (%s)",
			t.Name, plural(unknown, "partition"), t.Partitions, way)
	}
	return nil
}

// scratchChild makes the --via-child topic and attaches it to t. From the
// first request on, t names it, so that the end deletes whatever was made.
func (b *bench) scratchChild(ctx context.Context, t benchTarget, retention int64) (benchTarget, error) {
	t.child = t.name + "-child"
	if _, err := b.c.CreateTopic(ctx, client.CreateTopicRequest{
		Name: t.child, Partitions: t.partitions, RetentionMs: &retention,
	}); err != nil {
		return t, fmt.Errorf("creating the scratch child %s: %w", t.child, err)
	}
	if _, err := b.c.Attach(ctx, t.name, client.AttachRequest{Child: t.child}); err != nil {
		return t, fmt.Errorf("attaching the scratch child %s to %s: %w", t.child, t.name, err)
	}
	fmt.Fprintf(b.a.stderr, "bench: scratch child %s attached; the consumers read it\n", t.child)
	return t, nil
}

// dropScratchAll deletes the scratch child (detached first) and the
// scratch topic.
func (b *bench) dropScratchAll(ctx context.Context, t benchTarget) error {
	var errs []error
	if t.child != "" {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scratchDropTimeout)
		if err := b.c.Detach(dctx, t.name, t.child); err != nil && client.StatusOf(err) != http.StatusNotFound {
			errs = append(errs, fmt.Errorf("detaching the scratch child %s: %w", t.child, err))
		}
		cancel()
		errs = append(errs, b.dropScratch(ctx, t.child))
	}
	return errors.Join(append(errs, b.dropScratch(ctx, t.name))...)
}

// scratchName is bench-<8 random hex digits>: two benches at once, or one
// after a bench that could not delete its topic, never share a name.
func scratchName() (string, error) {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("naming the scratch topic: %w", err)
	}
	return "bench-" + hex.EncodeToString(r[:]), nil
}

// dropScratch deletes the scratch topic, on a context of its own so that
// Ctrl-C, which ended the bench, does not also prevent the cleanup. Gone
// already (a create that never happened) is fine.
func (b *bench) dropScratch(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scratchDropTimeout)
	defer cancel()
	err := b.c.DeleteTopic(ctx, name)
	if err == nil || client.StatusOf(err) == http.StatusNotFound {
		return nil
	}
	return &scratchLeftError{name: name, err: err}
}

// scratchLeftError is a scratch topic the bench could not delete; it says
// how to, since the bench is the only one who knows the name.
type scratchLeftError struct {
	name string
	err  error
}

func (e *scratchLeftError) Error() string {
	return fmt.Sprintf("could not delete the scratch topic %s: %v (delete it with \"narad topic rm %s\"; its records expire within %s anyway)",
		e.name, e.err, e.name, formatMs(scratchRetention.Milliseconds()))
}

func (e *scratchLeftError) Unwrap() error { return e.err }
