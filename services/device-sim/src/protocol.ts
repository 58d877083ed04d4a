// Protocol constants the simulator writes, by name (STYLE 7).

/** GB/T 28181-2016 §A.1: Content-Type of MANSCDP bodies, spelled as the standard's examples. */
export const MANSCDP_CONTENT_TYPE = 'Application/MANSCDP+xml';
/** §9.2 examples: SDP bodies of INVITE / 200 OK. */
export const SDP_CONTENT_TYPE = 'APPLICATION/SDP';
/** RFC 3261 §10.2.2: a REGISTER with Expires 0 removes the binding. */
export const UNREGISTER_EXPIRES = 0;
