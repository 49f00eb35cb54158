package header

// AWS is the reserved header of a record produced through the SQS or SNS
// protocol edge (docs/aws.md): what that edge needs to answer the record
// back as AWS would — its message attributes' original names and types,
// its sender, its system attributes — encoded by package awsattr. The
// attributes' values themselves are ordinary headers, so a /v1 consumer
// and a fan-out filter see them as such. A client cannot send it as a
// header (narad- is reserved); only the edge sets it, through
// ProduceRecord.AWS.
const AWS = ReservedPrefix + "aws"

// MaxAWS bounds the AWS header's value: it is part of the broker's
// allowance over the client caps (reservedBytes), which the other reserved
// headers — a producer id, a due time, a source id, five dead-letter
// headers — must still fit in beside it.
const MaxAWS = 2 << 10

// WithAWS returns hs (sorted) with the AWS header set to v, still sorted.
func WithAWS(hs []Header, v string) []Header { return with(hs, AWS, v) }
