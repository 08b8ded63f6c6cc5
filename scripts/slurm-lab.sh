#!/usr/bin/env bash
# A real Slurm (Debian 12's 22.05) on this one machine, for airtime's Slurm backend, its
# tests and its bench: emulated nodes (one slurmd per node, `slurmd -N nX`, each on its own
# port) with typed fake GPUs (gres.conf File= symlinks to /dev/null, so Slurm sets
# CUDA_VISIBLE_DEVICES), slurmctld, and slurmrestd with JWT auth. No systemd, no cgroups, no
# slurmdbd. docs/slurm.md describes it and the traps it avoids.
#
# Usage: scripts/slurm-lab.sh start     install what is missing (as root), write the config,
#                                       start the daemons, wait until every node is idle and
#                                       slurmrestd answers, write DIR/env.sh; when the lab is
#                                       already up, says so and returns at once
#        scripts/slurm-lab.sh stop      cancel the lab's jobs, stop its daemons by pid file
#                                       (munged too when a lab started it and no other lab
#                                       runs), wait until they have exited
#        scripts/slurm-lab.sh stop --purge   also delete DIR
#        scripts/slurm-lab.sh status    print whether it is up, its nodes and its jobs; exits 0
#                                       when up, 1 when down, 2 when partly up
# Afterwards: source DIR/env.sh (SLURM_CONF, SLURMRESTD_URL, SLURM_REST_USER, SLURM_REST_TOKEN).
# Do not export SLURM_JWT in a shell that runs srun (srun would send it to slurmd, which
# rejects it); env.sh does not.
#
# Environment (read by start; stop and status need only AIRTIME_SLURM_DIR):
#   AIRTIME_SLURM_DIR        state directory (default: ${TMPDIR:-/tmp}/airtime-slurm-lab)
#   AIRTIME_SLURM_NODES      emulated nodes (default 4): the first half n1.. carry h100 GPUs,
#                            the rest a100 (one node: h100 only)
#   AIRTIME_SLURM_GPUS       fake GPUs per node (default 8)
#   AIRTIME_SLURM_SHARDS     gres/shard per GPU (default 1000, so one shard is one milli-GPU,
#                            the engine's unit of a fraction; 0: no shards). docs/slurm.md
#   AIRTIME_SLURM_CPUS       CPUs each node claims (default 64; SlurmdParameters=config_overrides)
#   AIRTIME_SLURM_MEM_MB     memory each node claims (default 512000)
#   AIRTIME_SLURM_PORT       slurmctld's port (default 6817); slurmrestd listens on PORT+3 on
#                            127.0.0.1, node nI's slurmd on PORT+1000+I. Two labs on one host
#                            need different ports and directories. Keep them below the
#                            ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768 up
#                            on Linux): a client's outgoing connection may hold such a port,
#                            and slurmctld then dies at start ("Address already in use").
set -euo pipefail

t_start=$(date +%s%N)
elapsed() { echo "$((($(date +%s%N) - t_start) / 1000000))"; }  # milliseconds since start
say() {
  local ms
  ms=$(elapsed)
  printf 'slurm-lab [%3d.%02ds]: %s\n' $((ms / 1000)) $((ms % 1000 / 10)) "$*"
}
die() {
  echo "slurm-lab: $*" >&2
  exit 1
}

mode="${1:-}"
lab="${AIRTIME_SLURM_DIR:-${TMPDIR:-/tmp}/airtime-slurm-lab}"
nodes="${AIRTIME_SLURM_NODES:-4}"
gpus="${AIRTIME_SLURM_GPUS:-8}"
shards="${AIRTIME_SLURM_SHARDS:-1000}"
cpus="${AIRTIME_SLURM_CPUS:-64}"
mem="${AIRTIME_SLURM_MEM_MB:-512000}"
ctld_port="${AIRTIME_SLURM_PORT:-6817}"
rest_port=$((ctld_port + 3))
slurmd_base=$((ctld_port + 1000))
munged_marker=/run/munge/started-by-airtime-slurm-lab
# Taken by every lab on this host while it installs packages, decides whether munged runs
# and starts its daemons, and while a stop decides whether munged may end: labs of tests
# that run at the same time then never run apt-get twice at once, and a stop never ends the
# munged that another lab's slurmctld is about to use.
host_lock=/run/lock/airtime-slurm-lab.lock
host_lock_fd=

lock_host() {
  mkdir -p "$(dirname "$host_lock")"
  exec {host_lock_fd}>>"$host_lock"
  flock "$host_lock_fd"
}
unlock_host() {
  if [[ -n "$host_lock_fd" ]]; then
    exec {host_lock_fd}>&-
    host_lock_fd=
  fi
}

# The daemons of this lab that have pid files, in the order they are stopped.
pid_files() {
  local f
  for f in "$lab/run/slurmrestd.pid" "$lab"/run/slurmd-*.pid "$lab/run/slurmctld.pid"; do
    [[ -f "$f" ]] && echo "$f"
  done
  return 0
}

alive() { [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; }

# Whether the pid in file $1 is a live process named $2 (a recycled pid is not ours).
pid_file_alive() {
  local pid
  pid="$(cat "$1" 2>/dev/null || true)"
  alive "$pid" && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$2" ]]
}

# 0: every daemon of the lab runs; 1: none; 2: some.
lab_state() {
  local want=$((nodes + 2)) up=0 f
  # shellcheck source=/dev/null  # written by write_config
  [[ -f "$lab/lab.env" ]] && want=$(($(. "$lab/lab.env" && echo "$LAB_NODES") + 2))
  pid_file_alive "$lab/run/slurmctld.pid" slurmctld && up=$((up + 1))
  pid_file_alive "$lab/run/slurmrestd.pid" slurmrestd && up=$((up + 1))
  for f in "$lab"/run/slurmd-*.pid; do
    [[ -f "$f" ]] && pid_file_alive "$f" slurmd && up=$((up + 1))
  done
  if ((up == 0)); then return 1; fi
  if ((up == want)); then return 0; fi
  return 2
}

stop_lab() {
  local pids=() f p
  while IFS= read -r f; do
    # Read every pid first: the daemons delete their pid files as they exit.
    p="$(cat "$f" 2>/dev/null || true)"
    [[ -n "$p" ]] && pids+=("$p")
  done < <(pid_files)
  if [[ -f "$lab/slurm.conf" ]] && pid_file_alive "$lab/run/slurmctld.pid" slurmctld; then
    # Cancel the lab's jobs first, so the slurmstepd processes of running jobs end too.
    SLURM_CONF="$lab/slurm.conf" timeout 5 scancel --full --quiet -u "$(id -un)" 2>/dev/null || true
    local i
    for i in $(seq 1 30); do
      [[ -z "$(SLURM_CONF="$lab/slurm.conf" timeout 2 squeue -h -t R,CG -o %i 2>/dev/null)" ]] &&
        break
      sleep 0.1
    done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  local gone=0 any
  for _ in $(seq 1 150); do
    any=0
    for p in "${pids[@]}"; do alive "$p" && any=1; done
    if ((any == 0)); then
      gone=1
      break
    fi
    sleep 0.1
  done
  if ((gone == 0)); then
    for p in "${pids[@]}"; do
      if alive "$p"; then
        echo "slurm-lab: pid $p still alive after 15 s: SIGKILL" >&2
        kill -9 "$p" 2>/dev/null || true
      fi
    done
  fi
  # slurmstepd processes of this lab's jobs (their spool directory is under $lab).
  for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "$lab/" ||
      [[ "$(readlink "/proc/$p/cwd" 2>/dev/null)/" == "$lab/"* ]]; then
      kill -9 "$p" 2>/dev/null || true
    fi
  done
  rm -f "$lab"/run/*.pid
  # munged: only when a lab started it (the marker sits beside munged's own pid file, so any
  # lab's stop may end it) and no slurmctld or slurmd, of any lab, still needs it.
  lock_host
  if [[ -f "$munged_marker" ]] &&
    [[ -z "$(pgrep -x slurmctld || true)$(pgrep -x slurmd || true)" ]]; then
    p="$(cat /run/munge/munged.pid 2>/dev/null || true)"
    if alive "$p"; then
      kill "$p" 2>/dev/null || true
      for _ in $(seq 1 50); do
        alive "$p" || break
        sleep 0.1
      done
    fi
    rm -f "$munged_marker"
  fi
  unlock_host
}

install_packages() {
  # slurm-wlm-jwt-plugin: auth/jwt for slurmctld and slurmrestd. Never slurm-wlm-emulator:
  # a front-end build that cannot work here and takes over the slurmctld/slurmd alternatives.
  local pkgs=(munge slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin curl procps) missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if ((${#missing[@]} > 0)); then
    [[ $(id -u) -eq 0 ]] || die "missing packages ${missing[*]}: run as root to install them"
    echo "slurm-lab: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  # If slurm-wlm-emulator was ever installed, point the alternatives back at the real daemons.
  for p in slurmctld slurmd; do
    if [[ -x /usr/sbin/$p-wlm ]] && [[ "$(readlink -f /usr/sbin/$p)" != /usr/sbin/$p-wlm ]]; then
      update-alternatives --quiet --set "$p" "/usr/sbin/$p-wlm"
    fi
  done
}

write_config() {
  mkdir -p "$lab"/{state,spool,log,run,fakedev,out}
  chmod 755 "$lab" "$lab"/{state,spool,log,run,fakedev,out}
  chmod 1777 "$lab/out"  # jobs may run as other users
  local i
  for i in $(seq 0 $((gpus - 1))); do ln -sfn /dev/null "$lab/fakedev/nvidia$i"; done
  for i in $(seq 1 "$nodes"); do mkdir -p "$lab/spool/n$i"; done
  # Node types: n1..n$h100 carry h100, the rest a100.
  local h100=$(((nodes + 1) / 2)) host
  host="$(hostname)"
  # gres/shard (GPU sharing; how airtime runs a fraction of a GPU): the same count on every
  # GPU, so that a shard is 1/shards of a GPU. Slurm gives a GPU either whole or as shards,
  # never both at once, and takes a job's shards on a node from one GPU.
  [[ "$shards" =~ ^[0-9]{1,6}$ ]] || die "AIRTIME_SLURM_SHARDS must be 0-999999 (got '$shards')"
  local node_lines gres_lines shard_gres="" gres_types=gpu
  if ((shards > 0)); then
    shard_gres=",shard:$((shards * gpus))"
    gres_types=gpu,shard
  fi
  node_line() {  # FIRST LAST TYPE
    local range="n$1"
    (($2 > $1)) && range="n[$1-$2]"
    local ports="$((slurmd_base + $1))"
    (($2 > $1)) && ports="[$((slurmd_base + $1))-$((slurmd_base + $2))]"
    echo "NodeName=$range NodeHostname=$host NodeAddr=127.0.0.1 Port=$ports CPUs=$cpus" \
      "Boards=1 SocketsPerBoard=2 CoresPerSocket=$((cpus / 2)) ThreadsPerCore=1" \
      "RealMemory=$mem Gres=gpu:$3:$gpus$shard_gres Feature=$3 State=UNKNOWN"
  }
  gres_line() {
    local range="n$1"
    (($2 > $1)) && range="n[$1-$2]"
    echo "NodeName=$range Name=gpu Type=$3 File=$lab/fakedev/nvidia[0-$((gpus - 1))]"
    # The same count on every GPU: one line per GPU file (Slurm's per-GPU form).
    if ((shards > 0)); then
      local i
      for i in $(seq 0 $((gpus - 1))); do
        echo "NodeName=$range Name=shard Count=$shards File=$lab/fakedev/nvidia$i"
      done
    fi
  }
  node_lines="$(node_line 1 "$h100" h100)"
  gres_lines="$(gres_line 1 "$h100" h100)"
  if ((nodes > h100)); then
    node_lines+=$'\n'"$(node_line $((h100 + 1)) "$nodes" a100)"
    gres_lines+=$'\n'"$(gres_line $((h100 + 1)) "$nodes" a100)"
  fi
  # Without slurmdbd: AccountingStorageTRES=gres/gpu would be fatal, so it is absent;
  # preemption is by partition priority; jobcomp/filetxt records each job's start and end.
  cat >"$lab/slurm.conf" <<EOF
# Written by airtime's scripts/slurm-lab.sh; rewritten at each start.
ClusterName=airtimelab
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$lab/state/jwt_hs256.key
CredType=cred/munge
StateSaveLocation=$lab/state
SlurmdSpoolDir=$lab/spool/%n
SlurmctldPidFile=$lab/run/slurmctld.pid
SlurmdPidFile=$lab/run/slurmd-%n.pid
SlurmctldLogFile=$lab/log/slurmctld.log
SlurmdLogFile=$lab/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$lab/log/jobcomp.txt
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
PriorityType=priority/multifactor
PriorityWeightPartition=100000
PriorityWeightJobSize=1000
MinJobAge=300
MaxArraySize=100001
MaxJobCount=200000
GresTypes=$gres_types
$node_lines
PartitionName=low Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=high Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10
EOF
  cat >"$lab/gres.conf" <<EOF
# Written by airtime's scripts/slurm-lab.sh. Fake GPUs need File= entries (Count= alone
# drops them and marks the node INVAL); /dev/null stands in for each device.
AutoDetect=off
$gres_lines
EOF
  cat >"$lab/lab.env" <<EOF
LAB_NODES=$nodes
LAB_GPUS=$gpus
LAB_SHARDS=$shards
LAB_CTLD_PORT=$ctld_port
LAB_REST_PORT=$rest_port
EOF
  if [[ ! -s "$lab/state/jwt_hs256.key" ]]; then
    dd if=/dev/urandom of="$lab/state/jwt_hs256.key" bs=32 count=1 status=none
    chmod 0600 "$lab/state/jwt_hs256.key"
  fi
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  (
    close_fds
    exec runuser -u munge -- /usr/sbin/munged --num-threads=10
  )
  touch "$munged_marker"
  munge -n | unmunge >/dev/null || die "munged does not answer"
}

# Fails when one of the lab's ports is taken by a process that is not this lab's.
check_ports() {
  local p taken=()
  for p in "$ctld_port" "$rest_port" $(seq $((slurmd_base + 1)) $((slurmd_base + nodes))); do
    (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && taken+=("$p")
  done
  ((${#taken[@]} == 0)) ||
    die "port(s) ${taken[*]} already in use (another Slurm?); set AIRTIME_SLURM_PORT"
}

# Closes this shell's descriptors above 2. The daemons start in a subshell that calls this
# first: a daemon that kept one would hold, for as long as it runs, whatever the caller had
# open (a flock on a build lock, the pipe a test reads this script's output from).
close_fds() {
  local fd
  for fd in "/proc/$BASHPID/fd"/*; do
    fd=${fd##*/}
    if ((fd > 2)); then eval "exec $fd>&-"; fi
  done
}

# A start that failed half-way: shows why, stops what it started, exits 1.
fail_start() {
  echo "slurm-lab: start failed: $*" >&2
  local log
  for log in "$lab/log/slurmctld.log" "$lab/log/slurmrestd.log"; do
    if [[ -s "$log" ]]; then
      echo "---- ${log#"$lab"/} (end)" >&2
      tail -n 8 "$log" >&2
    fi
  done
  stop_lab >&2
  exit 1
}

start_lab() {
  [[ $(id -u) -eq 0 ]] || die "start needs root (slurmd runs jobs as their users)"
  if lab_state; then
    local running_nodes running_gpus running_port running_shards
    # shellcheck source=/dev/null  # written by write_config
    read -r running_nodes running_gpus running_port running_shards < <(. "$lab/lab.env" &&
      echo "$LAB_NODES $LAB_GPUS $LAB_CTLD_PORT ${LAB_SHARDS:-0}")
    if [[ "$running_nodes $running_gpus $running_port $running_shards" != \
      "$nodes $gpus $ctld_port $shards" ]]; then
      die "running in $lab with $running_nodes nodes x $running_gpus GPUs ($running_shards" \
        "shards each) on port $running_port, not the $nodes x $gpus ($shards) on port" \
        "$ctld_port asked: stop it first"
    fi
    say "already running in $lab (source $lab/env.sh)"
    return 0
  fi
  local state=0
  lab_state || state=$?
  if ((state == 2)); then
    say "partly running: stopping what is left first"
    stop_lab
  fi
  lock_host
  install_packages
  say "packages ready"
  write_config
  export SLURM_CONF="$lab/slurm.conf"
  check_ports
  # Fresh logs (the previous run's stay as *.prev): the wait for the first scheduling pass
  # below reads slurmctld.log.
  local log
  for log in "$lab"/log/*.log; do [[ -f "$log" ]] && mv -f "$log" "$log.prev"; done
  start_munge
  say "munged up"
  # Plain daemon names: Slurm checks argv[0], and auth/jwt loads only in "slurmctld".
  # -c: a clean lab, no jobs from an earlier run.
  (
    close_fds
    /usr/sbin/slurmctld -c
    for i in $(seq 1 "$nodes"); do /usr/sbin/slurmd -N "n$i"; done
  )
  unlock_host
  say "slurmctld and $nodes slurmd started"
  # Bounded by the clock, not by tries (a try may wait for sinfo's own timeout), and given
  # up at once when slurmctld is gone (it daemonizes before it binds its port).
  local idle=0 until=$((SECONDS + 30))
  while ((SECONDS < until)); do
    pid_file_alive "$lab/run/slurmctld.pid" slurmctld ||
      fail_start "slurmctld exited during start"
    idle=$(timeout 2 sinfo -h -N -p low -t idle -o %N 2>/dev/null | wc -l || true)
    ((idle >= nodes)) && break
    sleep 0.1
  done
  ((idle >= nodes)) || fail_start "only $idle of $nodes nodes idle after 30 s"
  say "all $nodes nodes idle"
  # slurmctld's first scheduling pass comes about 2 s after it starts; wait for it so the
  # first job is not delayed by it.
  for _ in $(seq 1 100); do
    grep -q 'SchedulerParameters=' "$lab/log/slurmctld.log" 2>/dev/null && break
    sleep 0.1
  done
  local token
  token="$(timeout 10 scontrol token lifespan=604800 | sed -n 's/^SLURM_JWT=//p' || true)"
  [[ -n "$token" ]] || fail_start "scontrol token gave no token (is auth/jwt loaded?)"
  # slurmrestd refuses root: it runs as nobody and the JWT decides who acts. Without
  # slurmdbd its default plugins (openapi/dbv0.0.3x) are fatal, so name the ones it can load.
  (
    close_fds
    SLURM_JWT=daemon exec setsid /usr/sbin/slurmrestd -a rest_auth/jwt -u nobody \
      -s openapi/v0.0.38,openapi/v0.0.37,openapi/v0.0.36 "127.0.0.1:$rest_port"
  ) >"$lab/log/slurmrestd.log" 2>&1 </dev/null &
  echo $! >"$lab/run/slurmrestd.pid"
  local ok=0
  for _ in $(seq 1 100); do
    if curl -sf -o /dev/null -H "X-SLURM-USER-NAME: $(id -un)" -H "X-SLURM-USER-TOKEN: $token" \
      "http://127.0.0.1:$rest_port/slurm/v0.0.38/ping"; then
      ok=1
      break
    fi
    sleep 0.1
  done
  ((ok)) || fail_start "slurmrestd does not answer on 127.0.0.1:$rest_port"
  say "slurmrestd on 127.0.0.1:$rest_port"
  cat >"$lab/env.sh" <<EOF
# Written by airtime's scripts/slurm-lab.sh start.
export SLURM_CONF=$lab/slurm.conf
export SLURMRESTD_URL=http://127.0.0.1:$rest_port
export SLURM_REST_USER=$(id -un)
export SLURM_REST_TOKEN=$token
EOF
  chmod 600 "$lab/env.sh"
  say "up: $nodes nodes x $gpus fake GPUs in $(elapsed) ms; source $lab/env.sh"
}

status_lab() {
  local state=0
  lab_state || state=$?
  case $state in
    0) echo "slurm-lab: up in $lab" ;;
    1) echo "slurm-lab: down ($lab)" ;;
    *) echo "slurm-lab: partly up in $lab (slurm-lab.sh stop, then start)" ;;
  esac
  if ((state != 1)) && [[ -f "$lab/slurm.conf" ]]; then
    SLURM_CONF="$lab/slurm.conf" timeout 5 sinfo -N -o '%N %P %T %G' || true
    SLURM_CONF="$lab/slurm.conf" timeout 5 squeue -o '%i %j %T %R' || true
  fi
  return "$state"
}

case "$mode" in
  start) start_lab ;;
  stop)
    stop_lab
    [[ "${2:-}" == --purge ]] && rm -rf "$lab"
    say "stopped"
    ;;
  status) status_lab ;;
  -h | --help | help)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    ;;
  *)
    echo "slurm-lab.sh: expected start, stop [--purge] or status (got '$mode')" >&2
    exit 2
    ;;
esac
