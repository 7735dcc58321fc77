# Writes a C++ file defining `const char NAME[]` with the contents of IN (a raw string),
# so a test that runs in the VM carries the text it checks.
# usage: cmake -DIN=FILE -DOUT=FILE.cpp -DNAME=IDENT -P embed_text.cmake
file(READ "${IN}" text)
string(FIND "${text}" ")embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's end marker )embed\"")
endif()
get_filename_component(base "${IN}" NAME)
file(WRITE "${OUT}.tmp" "// Generated from ${base} by embed_text.cmake.\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"embed(${text})embed\";\n")
# Unchanged text leaves the file alone, so nothing recompiles.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
