// Package scripts holds the project's release script (release.sh), the
// Dockerfile it puts in a release's image build context
// (release.Dockerfile), and the test that runs the script and checks every
// artefact it writes. It has no Go code of its own and nothing imports it.
package scripts
