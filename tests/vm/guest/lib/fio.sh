# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest library: fio with verification.
# Sourced by ../lib.sh, with the rest of the library.

# vm_fio DEV TAG [--parallel]: run the fio jobs read from stdin (job
# sections) on DEV with crc32c verification; fail unless every job wrote,
# read back and verified without an error.  The jobs run one after the
# other, or with --parallel all at once, each on the disk its section
# names (filename=; fio adds a job's files to the global section's, so
# DEV is then only the one the log line names).  JSON result in
# $VM_SCEN_DIR/fio-TAG.json.
# No disk statistics (disk_util=0): nothing reads them, and fio's walk of
# /sys/block printed "stat: No such file or directory" into the log when
# another session's disk went away meanwhile (churn's login cycles).
vm_fio() {
	local dev=$1 tag=$2 jobf json rc stonewall=stonewall file="filename=$1"
	if [ "${3:-}" = --parallel ]; then
		stonewall=""
		file=""
	fi
	jobf=$VM_SCEN_DIR/fio-$tag.fio
	json=$VM_SCEN_DIR/fio-$tag.json
	{
		cat <<-EOF
			[global]
			$file
			ioengine=libaio
			direct=1
			verify=crc32c
			verify_fatal=1
			do_verify=1
			$stonewall
			group_reporting=0
			disk_util=0
		EOF
		cat
	} >"$jobf"
	vm_log "fio $tag on $dev"
	fio --output-format=json --output="$json" "$jobf"
	rc=$?
	/usr/bin/python3 - "$json" "$rc" <<-'EOF' || vm_fail "fio $tag: $(cat "$VM_SCEN_DIR/fio-$tag.err" 2>/dev/null)"
		import json, sys
		path, rc = sys.argv[1], int(sys.argv[2])
		err = open(path[:-5] + ".err", "w")
		try:
		    text = open(path).read()
		    data = json.loads(text[text.index("{"):])
		except Exception as e:
		    err.write("fio exit %d, no JSON output (%s)" % (rc, e)); sys.exit(1)
		bad = []
		for j in data["jobs"]:
		    w, r = j["write"]["io_bytes"], j["read"]["io_bytes"]
		    line = "%-14s err=%d write=%dKiB read=%dKiB wIOPS=%.0f rIOPS=%.0f rBW=%.1fMiB/s" % (
		        j["jobname"], j["error"], w // 1024, r // 1024,
		        j["write"]["iops"], j["read"]["iops"], j["read"]["bw"] / 1024.0)
		    print(line)
		    if j["error"]:
		        bad.append("%s error %d" % (j["jobname"], j["error"]))
		    elif w == 0 or r < w:
		        bad.append("%s: wrote %d bytes, read back %d: verify did not run" % (j["jobname"], w, r))
		if rc != 0 and not bad:
		    bad.append("fio exit status %d" % rc)
		err.write("; ".join(bad))
		sys.exit(1 if bad else 0)
	EOF
}
