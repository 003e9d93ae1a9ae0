package judge

import (
	"ctrljudge/judge/family"
	"ctrljudge/judge/family/confighash"
	"ctrljudge/judge/family/deployment"
	"ctrljudge/judge/family/owner"
	"ctrljudge/judge/family/progress"
	"ctrljudge/judge/family/registry"
	"ctrljudge/judge/family/status"
)

// models is every exercise family, by the name tests.yaml gives as its
// model: adding a family adds its folder and one line here.
var models = map[string]family.Family{
	"deployment":        deployment.Family{},
	"deployment-status": status.Family{},
	"registry":          registry.Family{},
	"confighash":        confighash.Family{},
	"owner":             owner.Family{},
	"progress":          progress.Family{},
}
