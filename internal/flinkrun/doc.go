// Package flinkrun runs Beam Go pipelines on a real Apache Flink: Beam's
// Flink job server in a JVM of its own, with Flink's embedded cluster
// (--flink-master=[local]), started on free loopback ports and stopped
// with the process that started it.
//
// It is the set-up of beamjoin's Flink suite (internal/flinksuite), of the
// beamjoin command's tests on Flink, and of make bench-flink. The job
// server's Java classpath is resolved by Maven from Maven Central
// (scripts/flink.sh, from scripts/flink/pom.xml) and handed over in the
// environment variable named by ClasspathEnv; nothing fetched is committed.
//
// A pipeline is submitted with Execute, which takes its environment per
// call rather than from the global --environment_type flag, so that one
// test process can run LOOPBACK workers (in this process) and PROCESS
// workers (the test binary started again by the Go SDK's boot loader, as
// Flink starts workers in production) against the same job server.
// A test's pipeline writes its output with WriteLines, and RunLines runs
// it and returns the lines.
//
// What the job server is, which versions were tested and what Flink
// decides differently from Prism: docs/runners.md.
package flinkrun
