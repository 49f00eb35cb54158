package broker

import "github.com/narad-io/narad/internal/hosted"

// Dead letters are handed off by package hosted (hosted.DeadLetters: commit
// before settle); these are the broker's names for what other packages
// and the redrive read.

// Committer commits records to a partition another node owns (node RPC).
type Committer = hosted.Committer

// Dead-letter headers (docs/concepts.md, "Dead letters"): where the record
// came from and why it was dead-lettered.
const (
	HeaderDLQTopic         = hosted.HeaderDLQTopic
	HeaderDLQPartition     = hosted.HeaderDLQPartition
	HeaderDLQOffset        = hosted.HeaderDLQOffset
	HeaderDLQDeliveryCount = hosted.HeaderDLQDeliveryCount
	HeaderDLQReason        = hosted.HeaderDLQReason
	HeaderDLQMsgID         = hosted.HeaderDLQMsgID
	HeaderDLQPrefix        = hosted.HeaderDLQPrefix
)
