// Package awsmod drives a real narad node with the AWS SDK for Go v2's
// SQS and SNS clients (JSON and Query protocols), unchanged but for the
// endpoint URL and the keys: the acceptance of docs/aws.md. It is a
// module of its own so that the SDK stays out of narad's go.mod.
package awsmod
