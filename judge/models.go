package judge

var models = map[string]bool{"deployment": true}
