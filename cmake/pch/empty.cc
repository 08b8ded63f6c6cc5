// The source file of the targets that only make airtime's precompiled headers
// (cmake/precompiled_headers.cmake).
