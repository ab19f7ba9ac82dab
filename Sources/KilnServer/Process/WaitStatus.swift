import CKilnProcessShims
import Glibc

/// What `waitpid` said about a worker, as the master judges and names it.
enum WaitStatus {
    /// A non-zero exit status or a fatal signal. A clean exit (recycling) and death by a stop signal
    /// (SIGTERM, SIGINT, SIGQUIT, SIGHUP: someone stopped it before its handler was installed) are not.
    static func isCrash(_ status: Int32) -> Bool {
        if kiln_wifexited(status) != 0 { return kiln_wexitstatus(status) != 0 }
        if kiln_wifsignaled(status) != 0 { return ![SIGTERM, SIGINT, SIGQUIT, SIGHUP].contains(kiln_wtermsig(status)) }
        return true
    }

    /// `exited with status 2`, `was killed by SIGSEGV (core dumped)`.
    static func describe(_ status: Int32) -> String {
        if kiln_wifexited(status) != 0 { return "exited with status \(kiln_wexitstatus(status))" }
        if kiln_wifsignaled(status) != 0 {
            let sig = kiln_wtermsig(status)
            return "was killed by \(signalName(sig))" + (kiln_wcoredump(status) != 0 ? " (core dumped)" : "")
        }
        return "changed state (\(status))"
    }

    static func signalName(_ sig: Int32) -> String {
        switch sig {
        case SIGHUP: "SIGHUP"
        case SIGINT: "SIGINT"
        case SIGQUIT: "SIGQUIT"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV"
        case SIGPIPE: "SIGPIPE"
        case SIGTERM: "SIGTERM"
        case SIGCHLD: "SIGCHLD"
        default: "signal \(sig)"
        }
    }
}
