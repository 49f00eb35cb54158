package awsapi

// snsActions is every SNS action this edge serves (sns_*.go).
var snsActions = map[string]func(*Edge, *call) (map[string]any, error){}
