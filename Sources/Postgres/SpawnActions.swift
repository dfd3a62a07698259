internal import CLibPQ
import Glibc

/// Has the spawned program close every descriptor from `first` on, after the actions added before: those of
/// ours without close-on-exec (other threads' pipes, sockets) would otherwise go with it.
func addCloseDescriptors(from first: Int32, to actions: inout posix_spawn_file_actions_t) {
    posix_spawn_file_actions_addclosefrom_np(&actions, first)
}
