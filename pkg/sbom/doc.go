// Package sbom writes a CycloneDX 1.6 JSON SBOM of what rootfs-trim
// produced: the packages of the output with their versions, a file
// component for each file a run left changed in the output, and an
// annotation on its package for each file it removed (a removed file is
// no component of the output). It writes a document of its own or
// enriches one that a build wrote (Buildroot's generate-cyclonedx, syft),
// keeping every field of it: the merge is done on the JSON, so that a
// field this version of cyclonedx-go does not model survives.
package sbom
