package topic

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/refusal"
)

// Tag limits (docs/http-api.md, "Topic tags"): AWS's for queue and
// resource tags, sizes in bytes.
const (
	MaxTags        = 50
	MaxTagKeyLen   = 128
	MaxTagValueLen = 256
	// ReservedTagPrefix starts no tag key, in any case: AWS keeps it.
	ReservedTagPrefix = "aws:"
)

// Protocol attribute limits (aws_attributes): each value up to 10 KiB (a
// Policy can be long), keys and values together under 32 KiB.
const (
	MaxAWSAttributeLen   = 10 << 10
	MaxAWSAttributesSize = 32 << 10
)

// AWSAttributeKeys are the keys aws_attributes may hold, sorted: the SQS
// and SNS attributes that the edge keeps and a topic has no field of its
// own for. What a value means is the edge's business.
var AWSAttributeKeys = []string{
	"ArchivePolicy",
	"ContentBasedDeduplication",
	"DeduplicationScope",
	"DeliveryPolicy",
	"DisplayName",
	"FifoThroughputLimit",
	"FifoTopic",
	"KmsDataKeyReusePeriodSeconds",
	"KmsMasterKeyId",
	"MaximumMessageSize",
	"Policy",
	"ReceiveMessageWaitTimeSeconds",
	"RedriveAllowPolicy",
	"SignatureVersion",
	"SqsManagedSseEnabled",
	"TracingConfig",
}

// ValidateTags holds tags to the tag limits: at most MaxTags, keys of
// 1..MaxTagKeyLen bytes not starting with ReservedTagPrefix, values of at
// most MaxTagValueLen bytes, all UTF-8.
func ValidateTags(tags map[string]string) error {
	if len(tags) > MaxTags {
		return refusal.New(refusal.ErrInvalid, 0, "tags: at most %d, got %d", MaxTags, len(tags))
	}
	for _, k := range sortedKeys(tags) {
		v := tags[k]
		switch {
		case k == "" || len(k) > MaxTagKeyLen:
			return refusal.New(refusal.ErrInvalid, 0, "tags: a key must be 1..%d bytes, got %d (%.40q)", MaxTagKeyLen, len(k), k)
		case len(v) > MaxTagValueLen:
			return refusal.New(refusal.ErrInvalid, 0, "tags: the value of %q must be at most %d bytes, got %d", k, MaxTagValueLen, len(v))
		case !utf8.ValidString(k) || !utf8.ValidString(v):
			return refusal.New(refusal.ErrInvalid, 0, "tags: %q is not UTF-8", k)
		case strings.HasPrefix(strings.ToLower(k), ReservedTagPrefix):
			return refusal.New(refusal.ErrInvalid, 0, "tags: key %q: the prefix %q is reserved", k, ReservedTagPrefix)
		}
	}
	return nil
}

// ValidateAWSAttributes holds aws_attributes to its keys (one of
// AWSAttributeKeys) and sizes; it never reads a value's meaning.
func ValidateAWSAttributes(attrs map[string]string) error {
	total := 0
	for _, k := range sortedKeys(attrs) {
		v := attrs[k]
		if _, ok := slices.BinarySearch(AWSAttributeKeys, k); !ok {
			return refusal.New(refusal.ErrInvalid, 0, "aws_attributes: unknown key %q; allowed: %s", k, strings.Join(AWSAttributeKeys, ", "))
		}
		if len(v) > MaxAWSAttributeLen {
			return refusal.New(refusal.ErrInvalid, 0, "aws_attributes: %s must be at most %d bytes, got %d", k, MaxAWSAttributeLen, len(v))
		}
		if !utf8.ValidString(v) {
			return refusal.New(refusal.ErrInvalid, 0, "aws_attributes: %s is not UTF-8", k)
		}
		total += len(k) + len(v)
	}
	if total >= MaxAWSAttributesSize {
		return refusal.New(refusal.ErrInvalid, 0, "aws_attributes: keys and values must total under %d bytes, got %d", MaxAWSAttributesSize, total)
	}
	return nil
}

// sortedKeys orders the checks, so a map with two faults is always
// refused for the same one.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
