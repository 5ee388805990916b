package contract

import "strings"

// Dir is the image's directory for what apply keeps for the boot step.
const Dir = "usr/share/minikube"

// IndexPath is where apply puts the index in the image, and where the boot
// step (`rootfs-trim render`) reads it.
const IndexPath = Dir + "/rootfs-trim/index.json"

// contract.TemplateDir is where apply puts templates in the image.
const TemplateDir = Dir + "/templates"

// DeferredPath is where a deferred copy of dest lives in the image; tag
// names its condition (rules.Rule.Tag).
func DeferredPath(tag, dest string) string {
	return Dir + "/deferred/" + tag + "/" + strings.TrimPrefix(dest, "/")
}
