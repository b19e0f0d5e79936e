# background.sh -- sourced by a script that starts processes in the background, so that it stops each one on
# every exit path, pass or fail:
#
#   source tools/background.sh
#   trap stop_background EXIT            (or a cleanup function of the script's own that calls stop_background)
#   setsid CMD ... &                     a command that starts children of its own: in its own process group
#   background_group "$!"                stopped with its whole process group
#   CMD ... &                            a single process
#   background "$!"
#   stop_process "$pid" [GRACE_S]        stop one now (it is then forgotten)
#
# Stopping is SIGTERM, then SIGKILL to what is left after GRACE_S seconds (BACKGROUND_GRACE_S, 10 by default), then
# reaping it. A process that ended by itself (and was waited for) is left alone: a plain pid is signalled only while
# it is still this shell's child, so a pid the kernel has given to another process is never touched. A background
# job of a script (no job control) never leads a process group, so `setsid` runs CMD in place: its pid is its
# group's id. bash runs the EXIT trap on `exit`, on an error under `set -e` and on SIGTERM or SIGHUP; nothing runs
# on SIGKILL. Processes are read from /proc (Linux).

BACKGROUND_STARTED=()   # pids (a process) and -pids (a process group) started by this script, not yet stopped

background() {  # background PID: stop this process when the script exits
  BACKGROUND_STARTED+=("$1")
}

background_group() {  # background_group PID: stop PID's whole process group (PID started with setsid) on exit
  BACKGROUND_STARTED+=("-$1")
}

BACKGROUND_STAT=()   # what _background_stat read: STATE PPID PGID ...

_background_stat() {  # _background_stat PID: its /proc stat fields from the state on, in BACKGROUND_STAT; fails
  # when it is gone
  local line
  read -r line 2>/dev/null < "/proc/$1/stat" || return 1
  read -r -a BACKGROUND_STAT <<<"${line##*) }"   # after the command name (spaces and parentheses allowed in it)
}

_background_alive() {  # _background_alive TARGET: a process (PID) or a group member (-PGID) that is not a zombie
  local target=$1 dir
  if [ "${target#-}" = "$target" ]; then
    _background_stat "$target" && [ "${BACKGROUND_STAT[0]}" != Z ] && return 0
    return 1   # (an explicit status: a bare `return` in an EXIT trap gives the status from before the trap)
  fi
  for dir in /proc/[0-9]*; do
    _background_stat "${dir#/proc/}" || continue
    [ "${BACKGROUND_STAT[2]}" = "${target#-}" ] && [ "${BACKGROUND_STAT[0]}" != Z ] && return 0
  done
  return 1
}

_background_forget() {  # _background_forget PID: it is no longer this script's to stop
  local kept=() entry
  for entry in "${BACKGROUND_STARTED[@]}"; do
    [ "${entry#-}" = "$1" ] || kept+=("$entry")
  done
  BACKGROUND_STARTED=("${kept[@]}")
}

stop_process() {  # stop_process PID [GRACE_S]: stop one process (or its group, if registered as one) now
  local pid=$1 grace=${2:-${BACKGROUND_GRACE_S:-10}} target=$1 entry i
  for entry in "${BACKGROUND_STARTED[@]}"; do [ "$entry" = "-$pid" ] && target=-$pid; done
  _background_forget "$pid"
  if [ "$target" = "$pid" ]; then   # a plain pid waited for already may be another process's now
    _background_stat "$pid" && [ "${BACKGROUND_STAT[1]}" = "$BASHPID" ] || return 0
  fi
  if _background_alive "$target"; then
    kill -TERM -- "$target" 2>/dev/null || true
    for (( i = 0; i < grace * 10; i++ )); do _background_alive "$target" || break; sleep 0.1; done
    if _background_alive "$target"; then
      echo "background: $target outlived SIGTERM by ${grace}s: SIGKILL" >&2
      kill -KILL -- "$target" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}

stop_background() {  # stop_background: stop everything this script started and has not stopped yet
  local entry
  for entry in "${BACKGROUND_STARTED[@]}"; do stop_process "${entry#-}"; done
}
