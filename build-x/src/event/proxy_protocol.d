build-x/src/event/proxy_protocol.o: src/event/proxy_protocol.c \
 src/event/proxy_protocol.h src/event/../core/str.h \
 src/event/../core/types.h
src/event/proxy_protocol.h:
src/event/../core/str.h:
src/event/../core/types.h:
