package awsattr

import (
	"crypto/sha256"
	"encoding/hex"
)

// MessageID is the MessageId SQS and SNS answer for a record of topic:
// its Narad message id, except for a record with a producer id (FIFO's
// MessageDeduplicationId, header.MsgID), whose MessageId is derived from
// the topic and that id, shaped as a UUID. So a send deduplicated within
// the window answers the MessageId of the send it repeats — the record
// that was kept — though the broker never learns which record that was
// (docs/aws.md, "Message ids").
func MessageID(topic, naradID, producerID string) string {
	if producerID == "" {
		return naradID
	}
	sum := sha256.Sum256([]byte(topic + "\x00" + producerID))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
