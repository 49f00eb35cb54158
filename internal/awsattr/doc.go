// Package awsattr is how Amazon SQS's and SNS's message attributes live
// on a Narad record (docs/aws.md, "Message attributes"): their rules, the
// MD5 digests the AWS SDKs check, and their encoding as record headers.
//
// An attribute's value is an ordinary header named by the attribute's
// name in lower case (a Binary value in standard base64), so a /v1
// consumer and a fan-out filter see it as a header. What a header cannot
// say — the name's original case, the data type, the sender, the system
// attributes, the time the edge accepted the record — goes into one
// reserved header (header.AWS) as a small JSON object, the Meta. A record
// without it (produced through /v1) reads back with every client header
// as a String attribute.
//
// Invariant: Decode(Encode(attrs)) gives back attrs (same names, types
// and values) for every list Check accepts, so MD5OfAttributes of what a
// receiver gets equals what the sender was answered. The package imports
// nothing of ours but header and jsonenc.
package awsattr
