package broker

import "github.com/narad-io/narad/internal/storage"

// holdOptions makes a partition log open held (storage.Options.Held):
// commits are durable on return but visible only once released.
func holdOptions(opts *storage.Options) {
	// Filled in when storage's held logs land (issue 15, repl-storage).
	_ = opts
}
