// Package topic holds a topic's value types as the client-facing packages
// share them: the name rule, the key-to-partition rule, the create
// request, the view the API shows, and a partition as its owner reports
// it. It has no behaviour beyond pure functions of its arguments, so the
// broker, the fan-out engine and the HTTP layer can all speak it without
// one of them importing another.
//
// # The invariant
//
// A name ValidateName accepts is a safe single path element under the data
// directory, and KeyPartition is the one placement of a keyed record: produce
// and fan-out both call it, so a key lands in the same partition of a child
// as it would when produced there directly.
package topic
