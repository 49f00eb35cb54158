package main

import (
	"context"
	"fmt"

	"github.com/narad-io/narad/client"
)

// checkSinceFlags checks what only "replay --since" takes (cobra keeps
// --since apart from --from and --to).
func checkSinceFlags(f replayFlags, bySince bool) error {
	switch {
	case !bySince && f.count != 0:
		return flagErr("count", fmt.Sprint(f.count), "needs --since (by offset, --to says where to stop)")
	case bySince && f.since == "":
		return flagErr("since", "", "want a time: RFC 3339, Unix milliseconds, or a duration ago like 10m")
	case f.count < 0:
		return flagErr("count", fmt.Sprint(f.count), "must not be negative")
	}
	return nil
}

// replaySince is "replay --since": the records committed since a time, of
// one partition or merged from every partition in commit-time order, by
// GET /v1/topics/{t}/replay, following next_page_token until a page is
// caught up or --count records were printed.
func replaySince(ctx context.Context, c *client.Client, topic string, f replayFlags, pinned bool, printer messagePrinter) error {
	opts := client.SinceOptions{Since: f.since, Max: f.max}
	if pinned {
		opts.Partition = &f.partition
	}
	if f.count > 0 {
		opts.Max = min(f.max, f.count) // ask for no more than will be printed
	}
	printed := 0
	for m, err := range c.ReplaySinceAll(ctx, topic, opts) {
		if err == nil {
			err = printer.print(m)
		}
		if err != nil {
			return err
		}
		if printed++; f.count > 0 && printed >= f.count {
			return nil
		}
	}
	return nil
}
