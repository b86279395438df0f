/*
 * bcryptprimitives.dll for Wine before 8.13, which has none: Rust's standard
 * library imports ProcessPrng from it (its random source, e.g. for HashMap's
 * keys), so without it no Rust program for Windows starts under Debian 12's
 * Wine 8.0. This forwards ProcessPrng to RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. Test infrastructure only: built by
 * scripts/windows.sh and installed into the test's Wine prefix, never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
